"""Runs of the deliver actor: a backlog to one endpoint drains in runs (each leasing a batch
of the endpoint's due rows), with every attempt recorded once, no event answered 200 twice,
no PostgreSQL deadlock; the endpoint's health is written only when it changes, and its first
success after failures brings its waiting deliveries forward.

Real worker threads, the relay, a real receiver and a fresh PostgreSQL database (and SQLite).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from dramatiq import Worker
from sqlalchemy import select

from infra.clock import as_utc, now
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from infra.messaging import queues
from notifier import health, sweeper
from notifier.actors import declare, deliver_webhook
from notifier.dispatch import in_flight_cap
from tests.support import services
from tests.support.webhook_receiver import Reply, WebhookReceiver
from tests.support.webhook_world import World, running_world


@pytest.fixture(params=["sqlite", "postgresql"])
def any_world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    url = request.getfixturevalue("fresh_pg_url") if request.param == "postgresql" else ""
    with running_world(tmp_path, database_url=url) as built:
        yield built


def _deadlocks(database_url: str) -> int:
    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(services.PG_ADMIN_URL, autocommit=True) as conn:
        row = conn.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = %s", (name,)).fetchone()
    return int(row[0]) if row else 0


def _wait_until(predicate: Callable[[], bool], what: Callable[[], object], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {what()}")
        time.sleep(0.05)


def _deliveries(world: World) -> list[WebhookDelivery]:
    with world.services.session_factory() as session:
        return list(session.scalars(select(WebhookDelivery)))


def _attempts(world: World) -> list[WebhookAttempt]:
    with world.services.session_factory() as session:
        return list(session.scalars(select(WebhookAttempt)))


def test_a_backlog_drains_in_runs_recorded_once_without_redelivery(any_world: World) -> None:
    world, threads, events = any_world, 4, 60
    database_url = world.services.settings.database_url
    deadlocks_before = _deadlocks(database_url) if database_url else 0
    world.notifier.run_budget_s = 5.0
    world.notifier.max_in_flight = in_flight_cap(threads)
    declare(world.services, world.notifier)
    worker = Worker(world.services.broker, queues={queues.NOTIFICATIONS}, worker_threads=threads)
    stop = threading.Event()
    with WebhookReceiver() as receiver:
        # Every first attempt is refused (503), then it answers: the first success brings
        # the waiting rows forward and runs drain them.
        receiver.script([Reply(503)] * events)
        world.add_endpoint(world.root_id, receiver.url)
        for _ in range(events):
            world.submit(world.root_id)
        worker.start()
        sweeper.start(world.services, stop, per_endpoint=world.notifier.max_in_flight)
        try:
            _wait_until(lambda: all(r.status == "SUCCEEDED" for r in _deliveries(world)),
                        lambda: Counter(r.status for r in _deliveries(world)))
        finally:
            stop.set()
            worker.stop()
        accepted = Counter(receiver.accepted_event_ids())
        rows = _deliveries(world)
        attempts = _attempts(world)
    assert len(rows) == events and len(accepted) == events
    assert max(accepted.values()) == 1  # no event answered 200 twice
    assert not [a for a in attempts if a.outcome == "SUPERSEDED"]
    # Every request the receiver answered is one recorded attempt, and each row's count is
    # its own attempts (nothing was sent and forgotten).
    assert len(attempts) == len(receiver.requests)
    per_row = Counter(a.delivery_id for a in attempts)
    assert all(per_row[r.id] == r.attempts for r in rows)
    assert all(r.sending_token is None for r in rows)
    if database_url:
        assert _deadlocks(database_url) == deadlocks_before


def test_the_first_success_after_failures_brings_waiting_deliveries_forward(
    world: World, receiver: WebhookReceiver
) -> None:
    receiver.script([Reply(503)] * 3)
    endpoint_id = world.add_endpoint(world.root_id, receiver.url)
    for _ in range(3):
        world.submit(world.root_id)
    for row in _deliveries(world):
        assert deliver_webhook(world.notifier, row.id) == "PENDING"
    waiting = _deliveries(world)
    assert all(as_utc(r.next_attempt_at) > now() for r in waiting)
    with world.services.session_factory() as session:
        endpoint = session.get(WebhookEndpoint, endpoint_id)
        assert endpoint is not None and endpoint.failing_since is not None

    fresh = world.submit(world.root_id)
    (new_row,) = [r for r in _deliveries(world) if r.activity_id == fresh]
    assert deliver_webhook(world.notifier, new_row.id) == "SUCCEEDED"
    with world.services.session_factory() as session:
        endpoint = session.get(WebhookEndpoint, endpoint_id)
        assert endpoint is not None and endpoint.failing_since is None
    at = now()
    brought = {r.id: r for r in _deliveries(world)}
    assert all(as_utc(brought[r.id].next_attempt_at) <= at for r in waiting)
    assert all(brought[r.id].status == "PENDING" and brought[r.id].dispatched_until is None for r in waiting)


def test_health_is_written_when_it_changes_not_per_attempt(
    world: World, receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint_id = world.add_endpoint(world.root_id, receiver.url)

    def failing_since() -> object:
        with world.services.session_factory() as session:
            endpoint = session.get(WebhookEndpoint, endpoint_id)
            assert endpoint is not None
            return endpoint.failing_since

    def attempt(reply: Reply) -> None:
        receiver.script([reply])
        activity_id = world.submit(world.root_id)
        (row,) = [r for r in _deliveries(world) if r.activity_id == activity_id]
        deliver_webhook(world.notifier, row.id)

    attempt(Reply(200))
    # A flapping endpoint: a failure right after a success seen by this notifier is not
    # written (one write a minute at most, not one per flip).
    attempt(Reply(503))
    assert failing_since() is None
    attempt(Reply(200))
    assert failing_since() is None
    # Failures with no success for longer than the quiet time mark it failing, once.
    monkeypatch.setattr(health, "HEALTH_QUIET_S", 0.0)
    attempt(Reply(503))
    first = failing_since()
    assert first is not None
    attempt(Reply(503))
    assert failing_since() == first
    attempt(Reply(200))
    assert failing_since() is None
