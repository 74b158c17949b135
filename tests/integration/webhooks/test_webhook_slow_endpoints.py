"""Slow endpoints: an attempt ends at its deadline and is recorded, is never sent twice, and
one endpoint cannot occupy every notifier thread (real worker threads and relay running)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dramatiq import Worker
from dramatiq.middleware import TimeLimitExceeded
from sqlalchemy import select

from infra.clock import as_utc, now
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery
from infra.messaging import queues
from infra.webhooks.destinations import AllowList
from infra.webhooks.schedule import RetrySchedule
from notifier import sweeper
from notifier.actors import declare, deliver_webhook
from notifier.delivery import DeliveryConfig
from notifier.dispatch import in_flight_cap
from tests.support.webhook_receiver import Reply, WebhookReceiver
from tests.support.webhook_world import World, running_world

#: Retries an hour later: nothing in these tests is sent again by the schedule.
LATE_RETRIES = RetrySchedule(first_delay_s=3600)


def _wait_until(
    condition: Callable[[], bool], what: str | Callable[[], str], timeout_s: float = 30.0
) -> None:
    limit = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > limit:
            raise TimeoutError(what if isinstance(what, str) else what())
        time.sleep(0.05)


def _states(world: World) -> str:
    """Every delivery and attempt, for a failure message."""
    rows = [
        f"{d.id[:8]} {d.status} attempts={d.attempts} next={d.next_attempt_at} "
        f"sending_until={d.sending_until} dispatched_until={d.dispatched_until} error={d.last_error}"
        for d in _deliveries(world)
    ]
    tries = [f"{a.delivery_id[:8]} {a.outcome} {a.status_code} {a.error}" for a in _attempts(world)]
    return "not every delivery succeeded:\n" + "\n".join([*rows, "attempts:", *tries])


def _attempts(world: World) -> list[WebhookAttempt]:
    with world.services.session_factory() as session:
        return list(session.scalars(select(WebhookAttempt).order_by(WebhookAttempt.started_at)))


def _deliveries(world: World) -> list[WebhookDelivery]:
    with world.services.session_factory() as session:
        return list(session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.created_at)))


@pytest.fixture(params=["sqlite", "postgresql"])
def any_world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    """The webhook world over SQLite and over PostgreSQL."""
    url = request.getfixturevalue("fresh_pg_url") if request.param == "postgresql" else ""
    with running_world(tmp_path, database_url=url) as built:
        yield built


@pytest.fixture
def start_notifier() -> Iterator[Callable[[World, int], None]]:
    """Start ``threads`` worker threads on the notifications queue and the relay."""
    stops: list[Callable[[], None]] = []

    def start(world: World, threads: int) -> None:
        # The cap the notifier derives from its pool size, for this pool.
        world.notifier.max_in_flight = in_flight_cap(threads)
        declare(world.services, world.notifier)
        worker = Worker(world.services.broker, queues={queues.NOTIFICATIONS}, worker_threads=threads)
        worker.start()
        stop = threading.Event()
        sweeper.start(world.services, stop, per_endpoint=world.notifier.max_in_flight)
        stops.append(stop.set)
        stops.append(worker.stop)

    yield start
    for stop in stops:
        stop()


def test_dripping_endpoint_is_cut_off_at_the_deadline_recorded_and_sent_once(
    world: World, start_notifier: Callable[[World, int], None]
) -> None:
    # The answer would take 50 x 0.2 s, far longer than the lease the old per-read formula
    # gave these timeouts: only the attempt's deadline ends it before the lease runs out.
    world.notifier.config = DeliveryConfig(
        connect_timeout_s=0.5, read_timeout_s=0.5, total_timeout_s=1.0, transport_attempts=1
    )
    world.notifier.schedule = LATE_RETRIES
    start_notifier(world, 2)
    with WebhookReceiver(hang_limit_s=30) as slow:
        slow.script([Reply(drip_s=0.2, drip_lines=50)])
        world.add_endpoint(world.root_id, slow.url)
        world.submit(world.root_id)
        _wait_until(lambda: len(_attempts(world)) >= 1, "no attempt was recorded")
        assert slow.wait_cut_off(1) == 1
        (attempt,) = _attempts(world)
        assert attempt.status_code is None and attempt.outcome == "PENDING"
        assert attempt.error and attempt.error.startswith("deadline of 1 s exceeded")
        (row,) = _deliveries(world)
        assert (row.status, row.attempts, row.sending_token) == ("PENDING", 1, None)
        assert as_utc(row.next_attempt_at) > now()
        assert len(slow.requests) == 1


def test_an_interrupted_attempt_is_recorded_and_the_interruption_propagates(
    world: World, receiver: WebhookReceiver
) -> None:
    # dramatiq's time limit raises TimeLimitExceeded (a BaseException) inside the attempt;
    # here it arrives while the host name is being resolved.
    def interrupted(host: str, port: int) -> list[str]:
        raise TimeLimitExceeded("time limit exceeded")

    world.notifier.resolver = interrupted
    world.notifier.allow = AllowList.parse("hooks.walletd.test")
    world.add_endpoint(world.root_id, f"http://hooks.walletd.test:{receiver.port}/hook")
    world.submit(world.root_id)
    (row,) = _deliveries(world)
    with pytest.raises(TimeLimitExceeded):
        deliver_webhook(world.notifier, row.id)
    (attempt,) = _attempts(world)
    assert attempt.error and "TimeLimitExceeded" in attempt.error
    assert attempt.outcome == "PENDING" and attempt.number == 1
    (after,) = _deliveries(world)
    assert (after.status, after.attempts, after.schedule_attempts) == ("PENDING", 1, 1)
    assert after.sending_token is None and as_utc(after.next_attempt_at) > now()
    assert receiver.requests == []


def test_hanging_endpoint_with_more_deliveries_than_threads_leaves_room_for_others(
    any_world: World, start_notifier: Callable[[World, int], None]
) -> None:
    world, threads = any_world, 3
    world.notifier.config = DeliveryConfig(connect_timeout_s=2, read_timeout_s=60, total_timeout_s=60)
    start_notifier(world, threads)
    with WebhookReceiver(hang_limit_s=60) as slow, WebhookReceiver() as fast:
        slow.script([Reply(hang=True)] * 10)
        world.add_endpoint(world.root_id, slow.url)
        for _ in range(threads + 2):
            world.submit(world.root_id)
        slow.wait_for(world.notifier.max_in_flight, timeout_s=20)
        world.add_endpoint(world.root_id, fast.url)
        activity_id = world.submit(world.root_id)
        # Every slow request is still hanging (none released), yet the other endpoint is
        # served: the slow one holds only its cap of threads.
        (got,) = fast.wait_for(1, timeout_s=20)
        assert got.json()["id"] == activity_id
        assert len(slow.requests) == world.notifier.max_in_flight
        slow.release()
        # The deliveries that waited are sent once the endpoint has room, once each.
        slow.wait_for(threads + 3, timeout_s=30)
        _wait_until(
            lambda: all(row.status == "SUCCEEDED" for row in _deliveries(world)),
            lambda: _states(world),
            timeout_s=60,
        )
        assert len(set(slow.accepted_event_ids())) == threads + 3
        assert len(slow.requests) == threads + 3
