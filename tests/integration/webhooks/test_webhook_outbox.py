"""Outbox rows, delivery attempts, retries, replay and endpoint disabling, in one process."""

from __future__ import annotations

import base64
import json
from datetime import timedelta, timezone

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import func, select, update

from infra.clock import now, now_ms
from infra.db.models.activities import Activity
from infra.db.models.organizations import OrganizationFeature
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from infra.errors import InvalidRequest
from infra.identity.ancestry import organization_chain
from infra.pipeline import lifecycle, store
from infra.webhooks import outbox
from infra.webhooks.keystore import jwks_from_database
from infra.webhooks.outbox import sync_feature_endpoints
from infra.webhooks.payloads import activity_event_id
from infra.webhooks.replay import replay_failed
from notifier.actors import deliver_webhook
from notifier.sweeper import relay_once
from tests.support.webhook_receiver import Reply, WebhookReceiver
from tests.support.webhook_world import World


def _deliveries(world: World) -> list[WebhookDelivery]:
    with world.services.session_factory() as session:
        return list(session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.created_at)))


def _make_due(world: World, delivery_id: str) -> None:
    with world.services.uow() as uow:
        uow.session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == delivery_id)
            .values(next_attempt_at=now() - timedelta(seconds=1))
        )
        uow.commit()


def _state(world: World, delivery_id: str) -> WebhookDelivery:
    with world.services.session_factory() as session:
        row = session.get(WebhookDelivery, delivery_id)
        assert row is not None
        return row


def test_submission_and_status_change_write_rows_with_stable_event_ids(
    world: World, receiver: WebhookReceiver
) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    activity_id = world.submit(world.root_id)
    world.complete(activity_id)
    rows = _deliveries(world)
    # Created at version 1; the executor's claim and the transition each bump it.
    assert [r.event_id for r in rows] == [
        activity_event_id(activity_id, "ACTIVITY_STATUS_PENDING", 1),
        activity_event_id(activity_id, "ACTIVITY_STATUS_COMPLETED", 3),
    ]
    assert all(r.status == "PENDING" for r in rows)


def _move(world: World, activity_id: str, expected: str, status: str, *, commit: bool = True) -> list[str]:
    """Claim and transition as consensus and votes do; returns the event ids written."""
    query = select(WebhookDelivery.event_id).where(WebhookDelivery.activity_id == activity_id)
    with world.services.uow() as uow:
        before = set(uow.session.scalars(query))
        activity = store.claim_status(uow.session, activity_id, expected)
        assert activity is not None
        store.transition(uow, activity, status)
        written = [e for e in uow.session.scalars(query) if e not in before]
        if commit:
            uow.commit()
    return written


def test_every_status_change_is_one_event_even_back_to_an_earlier_status(
    world: World, receiver: WebhookReceiver
) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    activity_id = world.submit(world.root_id)
    needed, pending = lifecycle.CONSENSUS_NEEDED, lifecycle.PENDING
    assert len(_move(world, activity_id, pending, needed)) == 1  # consensus: needs approvals
    # A retried transaction writes the same event as the one that finally commits.
    rolled_back = _move(world, activity_id, needed, pending, commit=False)
    approved = _move(world, activity_id, needed, pending)  # an approval: back to consensus
    assert rolled_back == approved and len(approved) == 1
    assert len(_move(world, activity_id, pending, needed)) == 1  # still not enough approvals
    rows = _deliveries(world)
    assert [json.loads(r.body)["status"] for r in rows] == [pending, needed, pending, needed]
    assert len({r.event_id for r in rows}) == 4
    for row in rows:
        assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    assert len(set(receiver.accepted_event_ids())) == 4


def test_rolled_back_activity_leaves_no_outbox_rows(world: World, receiver: WebhookReceiver) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id, commit=False)
    assert _deliveries(world) == []


def test_parent_endpoint_receives_sub_organization_events(world: World, receiver: WebhookReceiver) -> None:
    parent = world.add_endpoint(world.root_id, receiver.url + "?who=parent")
    child = world.add_endpoint(world.sub_id, receiver.url + "?who=child")
    world.submit(world.sub_id)
    world.submit(world.root_id)
    rows = _deliveries(world)
    assert sorted((r.endpoint_id, r.subject_organization_id) for r in rows) == sorted(
        [(parent, world.sub_id), (child, world.sub_id), (parent, world.root_id)]
    )
    sub_rows = [r for r in rows if r.subject_organization_id == world.sub_id]
    assert sub_rows[0].event_id == sub_rows[1].event_id


def test_unsubscribed_and_inactive_endpoints_get_nothing(world: World, receiver: WebhookReceiver) -> None:
    world.add_endpoint(world.root_id, receiver.url, subscriptions=[])
    world.add_endpoint(
        world.root_id,
        receiver.url,
        subscriptions=[{"eventType": "ACTIVITY_UPDATES", "isActive": False}],
    )
    world.add_endpoint(
        world.root_id, receiver.url, subscriptions=[{"eventType": "BALANCE_CONFIRMED_UPDATES"}]
    )
    world.submit(world.root_id)
    assert _deliveries(world) == []


def test_delivery_is_signed_with_a_key_from_the_published_jwks(
    world: World, receiver: WebhookReceiver
) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    activity_id = world.submit(world.root_id)
    (row,) = _deliveries(world)
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    (got,) = receiver.wait_for(1)
    with world.services.session_factory() as session:
        doc = jwks_from_database(session, now_ms=now_ms())
    entry = next(k for k in doc["keys"] if k["kid"] == got.header("X-Turnkey-Signature-Key-Id"))
    public = base64.urlsafe_b64decode(entry["x"] + "=" * (-len(entry["x"]) % 4))
    message = (
        f"v1.ed25519.{entry['kid']}.{got.header('X-Turnkey-Timestamp')}.{got.header('X-Turnkey-Event-Id')}."
    ).encode() + got.body
    Ed25519PublicKey.from_public_bytes(public).verify(
        bytes.fromhex(got.header("X-Turnkey-Signature") or ""), message
    )
    payload = got.json()
    assert payload["id"] == activity_id and payload["status"] == "ACTIVITY_STATUS_PENDING"
    assert got.header("X-Turnkey-Organization-Id") == world.root_id
    assert got.header("X-Turnkey-Event-Type") == "ACTIVITY_UPDATES"


def test_server_error_then_success_retries_with_same_event_and_records_attempts(
    world: World, receiver: WebhookReceiver
) -> None:
    receiver.script([Reply(500, b"try later")])
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    (row,) = _deliveries(world)

    assert deliver_webhook(world.notifier, row.id) == "PENDING"
    pending = _state(world, row.id)
    assert pending.next_attempt_at is not None and pending.last_status_code == 500
    # No delayed message: the row waits undispatched, for the relay to hand on once due.
    assert pending.dispatched_until is None
    queued = world.services.broker.queues["notifications.DQ"]
    assert queued.qsize() == 0
    assert relay_once(world.services, grace=timedelta(seconds=60)) == 0  # not due yet
    assert deliver_webhook(world.notifier, row.id) == "not due"
    assert queued.qsize() == 0  # a stray early copy is dropped: the relay hands it on when due

    _make_due(world, row.id)
    assert relay_once(world.services, grace=timedelta(seconds=60)) == 1  # due: handed on
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    assert deliver_webhook(world.notifier, row.id) == "settled"
    got = receiver.wait_for(2)
    assert [r.status for r in got] == [500, 200]
    assert got[0].header("X-Turnkey-Event-Id") == got[1].header("X-Turnkey-Event-Id")
    with world.services.session_factory() as session:
        attempts = session.scalars(
            select(WebhookAttempt).where(WebhookAttempt.delivery_id == row.id).order_by(WebhookAttempt.number)
        ).all()
    assert [(a.number, a.status_code, a.response_excerpt, a.outcome) for a in attempts] == [
        (1, 500, "try later", "PENDING"),
        (2, 200, "ok", "SUCCEEDED"),
    ]
    assert all(a.latency_ms >= 0 for a in attempts)


def test_receiver_down_then_up_delivers_once(world: World, receiver: WebhookReceiver) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    receiver.stop()
    assert deliver_webhook(world.notifier, row.id) == "PENDING"
    assert _state(world, row.id).last_error
    receiver.start()
    _make_due(world, row.id)
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    assert receiver.accepted_event_ids() == [row.event_id]


def test_terminal_failure_then_replay_by_id(world: World, receiver: WebhookReceiver) -> None:
    receiver.script([Reply(404)])
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    assert deliver_webhook(world.notifier, row.id) == "FAILED"
    with world.services.uow() as uow:
        assert replay_failed(uow.session, delivery_ids=[row.id]) == [row.id]
        uow.commit()
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    with world.services.uow() as uow:
        assert replay_failed(uow.session, delivery_ids=[row.id]) == []  # succeeded: never again
    assert [r.status for r in receiver.wait_for(2)] == [404, 200]


def _failed_at(world: World, receiver: WebhookReceiver, *hours_ago: float) -> list[str]:
    """One terminally failed delivery created ``h`` hours ago for each ``h``; their ids."""
    receiver.script([Reply(410)] * len(hours_ago))
    world.add_endpoint(world.root_id, receiver.url)
    for _ in hours_ago:
        world.submit(world.root_id)
    rows = _deliveries(world)
    ids = []
    for row, hours in zip(rows, hours_ago, strict=True):
        assert deliver_webhook(world.notifier, row.id) == "FAILED"
        with world.services.uow() as uow:
            uow.session.execute(
                update(WebhookDelivery)
                .where(WebhookDelivery.id == row.id)
                .values(created_at=now() - timedelta(hours=hours))
            )
            uow.commit()
        ids.append(row.id)
    return ids


def test_replay_by_time_range_only_touches_failed_rows_in_range(
    world: World, receiver: WebhookReceiver
) -> None:
    before, early, late, after = _failed_at(world, receiver, 5, 3.5, 2.5, 1)
    with world.services.uow() as uow:
        replayed = replay_failed(
            uow.session,
            since=now() - timedelta(hours=4),
            until=now() - timedelta(hours=2),
            organization_id=world.root_id,
        )
        uow.commit()
    assert sorted(replayed) == sorted([early, late])
    statuses = [_state(world, i).status for i in (before, early, late, after)]
    assert statuses == ["FAILED", "PENDING", "PENDING", "FAILED"]


def test_replay_time_range_with_other_offsets_selects_the_same_rows(
    world: World, receiver: WebhookReceiver
) -> None:
    before, inside, after = _failed_at(world, receiver, 5, 3, 1)
    plus_five = timezone(timedelta(hours=5))
    minus_seven = timezone(timedelta(hours=-7))
    with world.services.uow() as uow:
        replayed = replay_failed(
            uow.session,
            since=(now() - timedelta(hours=4)).astimezone(plus_five),
            until=(now() - timedelta(hours=2)).astimezone(minus_seven),
        )
        uow.commit()
    assert replayed == [inside]
    assert [_state(world, i).status for i in (before, inside, after)] == ["FAILED", "PENDING", "FAILED"]


def test_rows_are_handed_to_the_broker_at_commit_and_the_relay_leaves_them(
    world: World, receiver: WebhookReceiver
) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    queue = world.services.broker.queues["notifications"]
    assert queue.qsize() == 1
    assert relay_once(world.services, grace=timedelta(seconds=60)) == 0


def test_without_a_dispatcher_the_relay_sends_due_rows_once_within_grace(
    world: World, receiver: WebhookReceiver
) -> None:
    outbox.set_dispatcher(None)  # like the ingress role: no broker hand-off at commit
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    grace = timedelta(seconds=60)
    assert relay_once(world.services, grace=grace) == 1
    assert relay_once(world.services, grace=grace) == 0
    queue = world.services.broker.queues["notifications"]
    assert queue.qsize() == 1


def test_the_relay_hands_each_endpoint_only_the_rows_it_has_room_for(world: World) -> None:
    outbox.set_dispatcher(None)
    busy = world.add_endpoint(world.root_id, "https://busy.example/")
    idle = world.add_endpoint(world.root_id, "https://idle.example/")
    for _ in range(5):
        world.submit(world.root_id)
    rows = _deliveries(world)
    busy_rows = [r.id for r in rows if r.endpoint_id == busy]
    assert len(busy_rows) == 5 and sum(r.endpoint_id == idle for r in rows) == 5
    with world.services.uow() as uow:  # one delivery of the busy endpoint is being sent
        uow.session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == busy_rows[0])
            .values(sending_until=now() + timedelta(seconds=30), sending_token="t")
        )
        uow.commit()
    grace = timedelta(seconds=60)
    assert relay_once(world.services, grace=grace, per_endpoint=3) == 2 + 3
    dispatched = [r for r in _deliveries(world) if r.dispatched_until is not None]
    assert sum(r.endpoint_id == busy for r in dispatched) == 2
    assert sum(r.endpoint_id == idle for r in dispatched) == 3
    # Nothing more until the endpoints have room again.
    assert relay_once(world.services, grace=grace, per_endpoint=3) == 0


def test_rolled_back_rows_are_not_dispatched(world: World, receiver: WebhookReceiver) -> None:
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id, commit=False)
    assert world.services.broker.queues["notifications"].qsize() == 0


def test_second_copy_of_a_message_is_refused_while_the_first_is_sending(
    world: World, receiver: WebhookReceiver
) -> None:
    import threading

    receiver.script([Reply(hang=True)])
    world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    outcome: list[str] = []
    first = threading.Thread(target=lambda: outcome.append(deliver_webhook(world.notifier, row.id)))
    first.start()
    receiver.wait_for(1)
    assert deliver_webhook(world.notifier, row.id) == "busy"
    receiver.release()
    first.join(10)
    assert outcome == ["SUCCEEDED"]
    assert len(receiver.requests) == 1


def test_endpoint_failing_for_days_is_disabled_and_shown_as_an_activity(
    world: World, receiver: WebhookReceiver
) -> None:
    receiver.script([Reply(503)])
    endpoint_id = world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    with world.services.uow() as uow:
        uow.session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id == endpoint_id)
            .values(failing_since=now() - timedelta(days=6))
        )
        uow.commit()
    assert deliver_webhook(world.notifier, row.id) == "PENDING"
    with world.services.session_factory() as session:
        endpoint = session.get(WebhookEndpoint, endpoint_id)
        assert endpoint is not None and not endpoint.is_active and endpoint.disabled_at
        shown = session.scalars(
            select(Activity).where(
                Activity.organization_id == world.root_id,
                Activity.type == "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT",
            )
        ).all()
    assert len(shown) == 1 and shown[0].status == "ACTIVITY_STATUS_COMPLETED"
    assert shown[0].intent == {"updateWebhookEndpointIntent": {"endpointId": endpoint_id, "isActive": False}}
    _make_due(world, row.id)
    assert deliver_webhook(world.notifier, row.id) == "endpoint inactive"


@pytest.mark.parametrize(
    ("failing_for", "disabled"), [(timedelta(days=2), True), (timedelta(hours=2), False)]
)
def test_endpoint_is_disabled_when_a_delivery_runs_out_of_retries_after_a_day_of_failure(
    world: World, receiver: WebhookReceiver, failing_for: timedelta, disabled: bool
) -> None:
    # The schedule gives up after ~1.5 days, before the 5-day rule could fire; without new
    # events no later attempt would ever check again.
    receiver.script([Reply(503)])
    endpoint_id = world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    last = world.notifier.schedule.max_attempts - 1
    with world.services.uow() as uow:
        uow.session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id == endpoint_id)
            .values(failing_since=now() - failing_for)
        )
        uow.session.execute(
            update(WebhookDelivery).where(WebhookDelivery.id == row.id).values(schedule_attempts=last)
        )
        uow.commit()
    assert deliver_webhook(world.notifier, row.id) == "FAILED"
    with world.services.session_factory() as session:
        endpoint = session.get(WebhookEndpoint, endpoint_id)
        assert endpoint is not None and endpoint.is_active is not disabled
        shown = session.scalars(
            select(Activity).where(Activity.type == "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT")
        ).all()
    assert len(shown) == (1 if disabled else 0)
    if disabled:
        assert endpoint.disabled_reason and "ran out of retries" in endpoint.disabled_reason


def test_success_clears_the_failing_since_mark(world: World, receiver: WebhookReceiver) -> None:
    endpoint_id = world.add_endpoint(world.root_id, receiver.url)
    world.submit(world.root_id)
    with world.services.uow() as uow:
        uow.session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id == endpoint_id)
            .values(failing_since=now() - timedelta(days=1))
        )
        uow.commit()
    (row,) = _deliveries(world)
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    with world.services.session_factory() as session:
        endpoint = session.get(WebhookEndpoint, endpoint_id)
        assert endpoint is not None and endpoint.failing_since is None


def test_legacy_webhook_feature_receives_activity_updates(world: World, receiver: WebhookReceiver) -> None:
    with world.services.uow() as uow:
        uow.session.add(
            OrganizationFeature(
                organization_id=world.root_id, name="FEATURE_NAME_WEBHOOK", value=receiver.url
            )
        )
        # What the set_organization_feature activity's completion does in its transaction.
        sync_feature_endpoints(uow.session, [world.root_id])
        uow.commit()
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    assert deliver_webhook(world.notifier, row.id) == "SUCCEEDED"
    assert len(receiver.wait_for(1)) == 1
    with world.services.session_factory() as session:
        count = session.scalar(select(func.count()).select_from(WebhookEndpoint))
    assert count == 1


def test_organization_chain_walks_up_to_the_root(world: World) -> None:
    with world.services.session_factory() as session:
        assert organization_chain(session, world.sub_id) == [world.sub_id, world.root_id]
        assert organization_chain(session, world.root_id) == [world.root_id]


def test_replay_needs_ids_or_a_time_range(world: World) -> None:
    with world.services.uow() as uow, pytest.raises(InvalidRequest):
        replay_failed(uow.session)
