"""``walletd webhooks`` commands: replay, key rotation with overlap, status."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from infra.clock import now_ms
from infra.db.models.webhooks import WebhookDelivery
from infra.webhooks.keystore import jwks_from_database
from notifier.actors import deliver_webhook
from tests.support.webhook_receiver import Reply, WebhookReceiver
from tests.support.webhook_world import World
from walletd import webhooks


def _run(world: World, *argv: str) -> int:
    parser = argparse.ArgumentParser()
    webhooks.configure(parser)
    return webhooks.run(parser.parse_args(list(argv)), world.services.settings)


def _only_delivery(world: World) -> WebhookDelivery:
    with world.services.session_factory() as session:
        (row,) = session.scalars(select(WebhookDelivery)).all()
        return row


def test_replay_by_id_requeues_a_failed_delivery(
    world: World, receiver: WebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver.script([Reply(400)])
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    row = _only_delivery(world)
    assert deliver_webhook(world.notifier, row.id) == "FAILED"
    assert _run(world, "replay", "--id", row.id) == 0
    assert row.id in capsys.readouterr().out
    assert _only_delivery(world).status == "PENDING"
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"


def test_replay_by_time_range(world: World, receiver: WebhookReceiver) -> None:
    receiver.script([Reply(422)])
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    row = _only_delivery(world)
    deliver_webhook(world.notifier, row.id)
    assert _run(world, "replay", "--since", "2000-01-01T00:00:00") == 0
    assert _only_delivery(world).status == "PENDING"


def test_replay_since_and_until_with_offsets_leave_rows_outside_the_range_failed(
    world: World, receiver: WebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver.script([Reply(410)] * 3)
    world.add_endpoint(world.root_id, receiver.url)
    for _ in range(3):
        world.submit(world.root_id)
    with world.services.session_factory() as session:
        ids = list(session.scalars(select(WebhookDelivery.id).order_by(WebhookDelivery.created_at)))
    created = {
        ids[0]: datetime(2026, 3, 1, 9, 0, tzinfo=UTC),  # before --since
        ids[1]: datetime(2026, 3, 1, 11, 0, tzinfo=UTC),  # inside
        ids[2]: datetime(2026, 3, 1, 13, 0, tzinfo=UTC),  # after --until
    }
    for delivery_id, at in created.items():
        assert deliver_webhook(world.notifier, delivery_id) == "FAILED"
        with world.services.uow() as uow:
            uow.session.execute(
                update(WebhookDelivery).where(WebhookDelivery.id == delivery_id).values(created_at=at)
            )
            uow.commit()
    # 10:00 UTC and 12:00 UTC, written in other offsets: kept as given, the wall-clock digits
    # (15:00 and 07:00) would select the wrong rows.
    argv = ("replay", "--since", "2026-03-01T15:00:00+05:00", "--until", "2026-03-01T07:00:00-05:00")
    assert _run(world, *argv) == 0
    assert ids[1] in capsys.readouterr().out
    with world.services.session_factory() as session:
        states = {d: session.get(WebhookDelivery, d).status for d in ids}  # type: ignore[union-attr]
    assert states == {ids[0]: "FAILED", ids[1]: "PENDING", ids[2]: "FAILED"}


def test_rotation_publishes_the_new_key_and_keeps_signing_with_the_old_one(
    world: World, receiver: WebhookReceiver
) -> None:
    before = world.notifier.keys.ring().signing_key(now_ms()).key_id
    assert _run(world, "rotate-key") == 0
    with world.services.session_factory() as session:
        kids = [k["kid"] for k in jwks_from_database(session, now_ms=now_ms())["keys"]]
    assert len(kids) == 2 and before in kids
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    deliver_webhook(world.notifier, _only_delivery(world).id)
    assert receiver.wait_for(1)[0].header("X-Turnkey-Signature-Key-Id") == before


def test_emergency_rotation_switches_the_running_notifier_at_once(
    world: World, receiver: WebhookReceiver
) -> None:
    before = world.notifier.keys.ring().signing_key(now_ms()).key_id
    assert _run(world, "rotate-key", "--overlap-hours", "0") == 0
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    deliver_webhook(world.notifier, _only_delivery(world).id)
    used = receiver.wait_for(1)[0].header("X-Turnkey-Signature-Key-Id")
    assert used != before
    with world.services.session_factory() as session:
        kids = [k["kid"] for k in jwks_from_database(session, now_ms=now_ms())["keys"]]
    assert kids == [used]


def test_status_lists_states(
    world: World, receiver: WebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    assert _run(world, "status") == 0
    assert "PENDING" in capsys.readouterr().out


def test_failed_lists_deliveries_with_their_attempts(
    world: World, receiver: WebhookReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    receiver.script([Reply(403, b"forbidden here")])
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    row = _only_delivery(world)
    deliver_webhook(world.notifier, row.id)
    assert _run(world, "failed", "--organization", world.root_id) == 0
    out = capsys.readouterr().out
    assert row.id in out and "status=403" in out and "forbidden here" in out
