"""The composition root's order is behaviour: secrets are sealed before anything renders an
activity, the webhook outbox included (``infra.bootstrap.ACTIVITY_LISTENERS``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from infra import bootstrap
from infra.audit import boots
from infra.audit import leaves as audit_leaves
from infra.clock import new_id, now
from infra.db.activity_rows import ActivityRow
from infra.db.models.activities import Activity
from infra.db.models.webhooks import WebhookDelivery
from infra.pipeline import lifecycle, store
from infra.sessions import redaction
from infra.webhooks import outbox
from infra.worker_services import WorkerServices
from tests.support.webhook_world import World, running_world

CODE = "918273"
TOKEN = "eyJhbGciOiJub25lIn0.eyJ2ZXJpZmljYXRpb24iOiJ0b2tlbiJ9.c2lnbmF0dXJl"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with running_world(tmp_path) as built:
        yield built


def test_secrets_are_sealed_before_the_outbox_renders_an_activity() -> None:
    order = list(bootstrap.ACTIVITY_LISTENERS)
    outbox_at = order.index(outbox.on_activity_change)
    assert order.index(redaction.seal_on_create) == 0
    assert order.index(redaction.redact_on_settle) < outbox_at


def test_every_unit_of_work_runs_the_wired_listeners_then_the_settled_announcement(
        world: World) -> None:
    services = world.services
    assert isinstance(services, WorkerServices)
    uow = services.uow()
    wired = len(bootstrap.ACTIVITY_LISTENERS)
    assert uow.listeners[:wired] == bootstrap.ACTIVITY_LISTENERS
    # a worker-type process signs its app proofs right after the audit leaf they commit to
    assert [type(getattr(f, "__self__", None)) for f in uow.listeners[wired:-1]] == [
        boots.AppProofs]
    assert uow.listeners[-1] == services.settlements.on_activity_change


def test_the_audit_leaf_records_what_the_redaction_left() -> None:
    order = list(bootstrap.ACTIVITY_LISTENERS)
    assert order.index(audit_leaves.on_activity_change) > order.index(redaction.redact_on_settle)


@pytest.mark.parametrize(("activity_type", "intent_key", "field", "secret"), [
    ("ACTIVITY_TYPE_OTP_AUTH", "otpAuthIntent", "otpCode", CODE),
    ("ACTIVITY_TYPE_VERIFY_OTP", "verifyOtpIntent", "otpCode", CODE),
    ("ACTIVITY_TYPE_OTP_LOGIN", "otpLoginIntent", "verificationToken", TOKEN),
])
def test_a_webhook_payload_never_contains_a_code_or_token(
        world: World, activity_type: str, intent_key: str, field: str, secret: str) -> None:
    world.add_endpoint(world.root_id, "https://hooks.example/")
    intent = {"otpId": "otp-1", field: secret}
    body = json.dumps({"type": activity_type, "organizationId": world.root_id,
                       "timestampMs": "1", "parameters": intent})
    with world.services.uow() as uow:
        moment = now()
        activity = ActivityRow(id=new_id(), organization_id=world.root_id, type=activity_type,
                               status=lifecycle.PENDING, fingerprint="sha256:" + activity_type,
                               body=body, timestamp_ms="1", intent={intent_key: intent},
                               result={}, failure=None, user_id=None, version=1,
                               created_at=moment, updated_at=moment)
        store.accept(uow, activity)
        uow.commit()
        activity_id = activity.id
    with world.services.uow() as uow:
        claimed = store.claim_status(uow.session, activity_id, lifecycle.PENDING)
        assert claimed is not None
        store.transition(uow, claimed, lifecycle.COMPLETED, result={"ok": {}})
        uow.commit()
    with world.services.session_factory() as session:
        bodies = list(session.scalars(select(WebhookDelivery.body)
                                      .where(WebhookDelivery.activity_id == activity_id)))
        stored = session.get(Activity, activity_id)
        assert stored is not None
        assert secret not in stored.body and secret not in json.dumps(stored.intent)
    assert len(bodies) == 2  # created and completed: both events were written
    for delivered in bodies:
        text = delivered if isinstance(delivered, str) else json.dumps(delivered)
        assert secret not in text
        assert activity_type in text
