"""The audit log on PostgreSQL: every change a leaf, checkpoints, proofs, `audit verify`."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from sqlalchemy import select

from infra.audit import merkle, note
from infra.audit.verify import State, verify_database
from infra.clock import new_id
from infra.db.models.audit import AuditLeaf
from infra.db.models.webhooks import WebhookDelivery, WebhookEndpoint
from infra.webhooks.outbox import ENDPOINT_ABSENCE
from tests.integration.audit.conftest import World


def _leaves(world: World) -> list[dict]:
    with world.services.read_session_factory() as session:
        return [json.loads(d) for d in session.scalars(select(AuditLeaf.data)
                                                       .order_by(AuditLeaf.idx))]


def test_every_change_is_a_leaf_with_a_verifiable_proof(world: World, tmp_path: Path) -> None:
    address = world.create_wallet("audit")
    signed = world.sign(address, 1)
    assert signed["status"] == "ACTIVITY_STATUS_COMPLETED"
    first = world.checkpoint()
    leaves = _leaves(world)
    assert [leaf["index"] for leaf in leaves] == list(range(first.size))
    mine = [leaf for leaf in leaves if leaf.get("activityId") == signed["id"]]
    assert [(leaf["status"], leaf["previousStatus"]) for leaf in mine] == [
        ("ACTIVITY_STATUS_PENDING", None), ("ACTIVITY_STATUS_COMPLETED", "ACTIVITY_STATUS_PENDING")]
    assert mine[1]["prev"] == mine[0]["index"] and mine[0]["prev"] is None
    assert mine[1]["policyOutcome"] and mine[1]["decisionDigest"].startswith("sha256:")
    assert mine[1]["approvers"] == [world.root["userId"]]
    assert mine[1]["resultDigest"].startswith("sha256:")
    assert not any("signRawPayloadResult" in json.dumps(leaf) for leaf in leaves)
    kinds = {leaf["kind"] for leaf in leaves}
    assert {"activity", "key"} <= kinds  # the service keys created at first start

    # The checkpoint verifies with the key published at discovery.
    keys = world.http.simulate_get("/public/v1/discovery/keys").json
    verifier = note.Verifier.parse(keys["auditLogVerifierKey"])
    published = world.http.simulate_get("/public/v1/audit/checkpoint").text
    checkpoint = note.open_checkpoint(published, verifier)
    assert (checkpoint.size, checkpoint.root) == (first.size, first.root)

    # Inclusion proofs through the query, verified by the client-side code.
    answer = world.query("get_audit_inclusion_proof", {"activityId": signed["id"]})
    assert [int(leaf["leafIndex"]) for leaf in answer["leaves"]] == [m["index"] for m in mine]
    for leaf in answer["leaves"]:
        merkle.verify_inclusion(int(leaf["leafIndex"]), checkpoint.size,
                                merkle.leaf_hash(leaf["leafData"].encode()),
                                [base64.b64decode(p) for p in leaf["inclusionProof"]],
                                checkpoint.root)

    # More activity, a second checkpoint, a consistency proof between them.
    world.sign(address, 2)
    second = world.checkpoint()
    assert second.size > first.size
    proof = world.query("get_audit_consistency_proof", {"firstTreeSize": str(first.size)})
    assert proof["checkpoint"]["treeSize"] == str(second.size)
    merkle.verify_consistency(first.size, second.size, first.root, second.root,
                              [base64.b64decode(p) for p in proof["consistencyProof"]])

    state = State()
    with world.services.read_session_factory() as session:
        report = verify_database(session, state=state)
    assert report.tree_size == second.size and state.size == second.size
    assert state.verifier_key == str(verifier)


def test_changes_the_orm_writes_stage_their_leaves_too(world: World) -> None:
    """With a webhook endpoint, the outbox listener has the ORM write the new activity, so
    its creation's leaf goes in on its own rather than with the activity's statement."""
    org = world.root["organizationId"]
    with world.services.uow() as uow:
        uow.session.add(WebhookEndpoint(
            id=new_id(), organization_id=org, url="https://127.0.0.1:9/hook", name="hook",
            is_active=True, subscriptions=[{"eventType": "ACTIVITY_UPDATES", "isActive": True}]))
        uow.commit()
    ENDPOINT_ABSENCE.forget()  # the database's announcement would do it a moment later
    address = world.create_wallet("orm")
    signed = world.sign(address, 1)
    assert signed["status"] == "ACTIVITY_STATUS_COMPLETED"
    with world.services.read_session_factory() as session:
        events = session.scalars(select(WebhookDelivery.event_id)
                                 .where(WebhookDelivery.activity_id == signed["id"])).all()
    assert len(events) == 2  # the outbox listener ran (and flushed) for both changes
    world.checkpoint()
    mine = [leaf for leaf in _leaves(world) if leaf.get("activityId") == signed["id"]]
    assert [(leaf["status"], leaf["previousStatus"]) for leaf in mine] == [
        ("ACTIVITY_STATUS_PENDING", None), ("ACTIVITY_STATUS_COMPLETED", "ACTIVITY_STATUS_PENDING")]
    with world.services.read_session_factory() as session:
        report = verify_database(session, state=State())
    assert report.tree_size >= 2


def test_the_openapi_document_describes_the_audit_queries(world: World) -> None:
    document = world.http.simulate_get("/public/v1/openapi.json").json
    for name in ("get_audit_checkpoint", "get_audit_inclusion_proof",
                 "get_audit_consistency_proof"):
        assert "/public/v1/query/" + name in document["paths"]
        assert "/public/v1/query/" + name not in document["x-walletd-undocumented-operations"]
    assert "walletdAuditCheckpoint" in document["definitions"]


def test_key_hierarchy_events_are_leaves_and_checkpoints_come_on_demand(world: World) -> None:
    import subprocess
    import sys

    from tests.support.deployment import ROOT

    env = {**os.environ, "WALLETD_DATA_DIR": str(world.services.settings.data_dir),
           "WALLETD_DATABASE_URL": world.url, "WALLETD_BROKER_URL": "memory://"}
    for args in (["keys", "rotate"], ["keys", "service-rotate", "notarizer"]):
        done = subprocess.run([sys.executable, "-m", "walletd", *args], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "walletd", "audit", "checkpoint"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    keys = world.http.simulate_get("/public/v1/discovery/keys").json
    checkpoint = note.open_checkpoint(done.stdout, note.Verifier.parse(keys["auditLogVerifierKey"]))
    events = [(leaf["event"], leaf["details"]) for leaf in _leaves(world) if leaf["kind"] == "key"]
    assert checkpoint.size == len(_leaves(world))  # the command appended everything staged
    rotated = [d for e, d in events if e == "MASTER_KEY_ROTATED"]
    assert rotated and rotated[0]["masterKeyVersion"] == 2 and rotated[0]["rowsRewrapped"] > 0
    assert ("SERVICE_KEY_ROTATED", "notarizer", 2) in [
        (e, d.get("purpose"), d.get("version")) for e, d in events]
    assert not any("private" in json.dumps(d).lower() for _, d in events)
