"""Tampering with a PostgreSQL deployment's history: `walletd audit verify` finds each change,
and the witness refuses the log an operator rewrites (with the log key) to hide it.

Each test: activities, a checkpoint verified (state kept) and accepted by a witness; then one
tamper directly in the database. ``verify`` names it. An operator who then rewrites the log so
that it matches the tampered rows again (rebuilt leaves and tree, a new checkpoint signed with
the deployment's own key) makes ``verify`` pass on a fresh state, but neither ``verify`` with
its kept state nor the witness accepts the rewritten log.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, insert, select, text, update

from infra.audit import checkpoints, merkle
from infra.audit.canonical import canonical, digest
from infra.audit.verify import Discrepancy, State, verify_database
from infra.audit.witness import Witness
from infra.bootstrap import bootstrap
from infra.db.models.activities import Activity
from infra.db.models.audit import AuditCheckpoint, AuditLeaf, AuditNode, AuditState, table
from infra.settings import Settings
from infra.worker_services import log_keys
from tests.integration.audit.conftest import World
from tests.support import services as test_services


def _verify(world: World, state_file: Path, url: str | None = None) -> None:
    from infra.db.engine import make_engine, make_read_session_factory

    engine = make_engine(url or world.url, pool_size=1)
    try:
        state = State.load(state_file)
        with make_read_session_factory(engine)() as session:
            verify_database(session, state=state)
        state.save(state_file)
    finally:
        engine.dispose()


def _setup(world: World, tmp_path: Path) -> tuple[dict[str, Any], Path, Witness]:
    address = world.create_wallet("tamper")
    signed = world.sign(address, 1)
    world.sign(address, 2)
    world.checkpoint()
    state_file = tmp_path / "verify-state.json"
    _verify(world, state_file)
    witness = Witness("http://walletd", tmp_path / "witness-state.json", fetch=world.fetch)
    witness.check()
    return signed, state_file, witness


def _rewrite_log(world: World, mutate: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
                 ) -> None:
    """What an operator holding the log key can do: rebuild the whole log and sign it."""
    with world.services.uow() as uow:
        session = uow.session
        leaves = [json.loads(d) for d in session.scalars(select(AuditLeaf.data)
                                                         .order_by(AuditLeaf.idx))]
        leaves = mutate(leaves)
        for model in (AuditLeaf, AuditNode, AuditCheckpoint):
            session.execute(delete(model))
        tree, previous = merkle.MemoryTree(), {}
        for index, leaf in enumerate(leaves):
            leaf["index"], leaf["prev"] = index, previous.get(leaf.get("activityId"))
            if leaf.get("activityId"):
                previous[leaf["activityId"]] = index
            data = canonical(leaf)
            tree.append(merkle.leaf_hash(data))
            session.execute(insert(table(AuditLeaf)).values(
                idx=index, organization_id=leaf.get("organizationId"),
                activity_id=leaf.get("activityId"), data=data.decode(),
                hash=merkle.leaf_hash(data)))
        for level, hashes in enumerate(tree.levels):
            for index, value in enumerate(hashes):
                session.execute(insert(table(AuditNode)).values(level=level, idx=index,
                                                                   hash=value))
        session.execute(update(AuditState).where(AuditState.id == 1).values(size=tree.size))
        checkpoints.sign_current(session, log_keys(world.services).get(session))
        uow.commit()


def _refused(check: Callable[[], Any], *words: str) -> str:
    with pytest.raises(Discrepancy) as found:
        check()
    message = str(found.value)
    assert all(w in message for w in words), message
    return message


def test_an_edited_result_is_found(world: World, tmp_path: Path) -> None:
    signed, state_file, witness = _setup(world, tmp_path)
    forged = {"signRawPayloadResult": {"r": "00" * 32, "s": "00" * 32, "v": "00"}}
    with world.services.uow() as uow:
        uow.session.execute(update(Activity).where(Activity.id == signed["id"])
                            .values(result=forged))
        uow.commit()
    _refused(lambda: _verify(world, state_file), signed["id"], "result", "edited")

    def cover_up(leaves: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for leaf in leaves:
            if leaf.get("activityId") == signed["id"] and leaf["status"].endswith("COMPLETED"):
                leaf["resultDigest"] = digest(forged)
        return leaves

    _rewrite_log(world, cover_up)
    _verify(world, tmp_path / "fresh-state.json")  # a newcomer sees a consistent log
    _refused(lambda: _verify(world, state_file), "rewritten")
    _refused(witness.check, "fork")


def test_a_deleted_activity_is_found(world: World, tmp_path: Path) -> None:
    signed, state_file, witness = _setup(world, tmp_path)
    with world.services.uow() as uow:
        uow.session.execute(delete(Activity).where(Activity.id == signed["id"]))
        uow.commit()
    _refused(lambda: _verify(world, state_file), signed["id"], "deleted")
    _rewrite_log(world, lambda leaves: [x for x in leaves if x.get("activityId") != signed["id"]])
    _verify(world, tmp_path / "fresh-state.json")
    _refused(lambda: _verify(world, state_file), "rollback")
    _refused(witness.check, "rollback")


def test_swapped_leaves_are_found(world: World, tmp_path: Path) -> None:
    signed, state_file, witness = _setup(world, tmp_path)
    with world.services.uow() as uow:
        a, b = uow.session.execute(select(AuditLeaf.idx, AuditLeaf.data, AuditLeaf.hash).where(
            AuditLeaf.activity_id == signed["id"]).order_by(AuditLeaf.idx)).all()[:2]
        for mine, other in ((a, b), (b, a)):
            uow.session.execute(update(AuditLeaf).where(AuditLeaf.idx == mine.idx)
                                .values(data=other.data, hash=other.hash))
        uow.commit()
    _refused(lambda: _verify(world, state_file), f"leaf {a.idx}", "reordered")

    _rewrite_log(world, lambda leaves: leaves)  # the swapped order, re-indexed and re-signed
    _refused(lambda: _verify(world, tmp_path / "fresh-state.json"), signed["id"], "reordered")
    _refused(witness.check, "fork")


def test_a_database_rolled_back_to_an_older_dump_is_found(world: World, tmp_path: Path) -> None:
    _signed, state_file, witness = _setup(world, tmp_path)
    dump = tmp_path / "older.sql"
    subprocess.run(["pg_dump", "--no-owner", "-f", str(dump), world.url], check=True)
    address = world.create_wallet("after the dump")
    world.sign(address, 3)
    world.checkpoint()
    _verify(world, state_file)
    witness.check()
    restored = test_services.create_database()
    try:
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(dump), restored],
                       check=True, capture_output=True)
        _refused(lambda: _verify(world, state_file, restored), "rollback")
        settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path / "restored"),
                                      "WALLETD_DATABASE_URL": restored,
                                      "WALLETD_BROKER_URL": "memory://"})
        services = bootstrap(settings, "ingress")
        try:
            import falcon.testing

            from ingress.app import create_app
            old = falcon.testing.TestClient(create_app(services))

            def fetch(url: str) -> bytes:
                path, _, qs = url.partition("//")[2].partition("/")[2].partition("?")
                return old.simulate_get("/" + path, query_string=qs or None).content

            rolled_back = Witness("http://walletd", witness.state_path, fetch=fetch)
            _refused(rolled_back.check, "rollback")
        finally:
            services.stop_listening()
            services.engine.dispose()
    finally:
        test_services.drop_database(restored)
    with world.services.read_session_factory() as session:
        assert session.execute(text("select count(*) from audit_checkpoints")).scalar()
