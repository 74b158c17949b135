"""The notifier's relay is woken by PostgreSQL, not by polling.

A delivery row written where no broker is at hand (the ingress) is announced by a trigger
(``walletd_deliveries_due``); the relay, whose idle sleep is made far longer than this test
may take, dispatches it because it was told, and reads nothing while idle.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import event, select

import notifier.sweeper
from infra.db.models.webhooks import WebhookDelivery
from infra.messaging import queues
from infra.webhooks import outbox
from tests.support.webhook_world import build_world

LONG = 60.0


def test_an_announced_row_wakes_the_idle_relay(fresh_pg_url: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notifier.sweeper, "IDLE_S", LONG)
    world = build_world(tmp_path, database_url=fresh_pg_url)
    services = world.services
    monkeypatch.setattr(outbox, "_dispatcher", None)   # as in the ingress: rows left to the relay
    endpoint_id = world.add_endpoint(world.root_id, "http://127.0.0.1:9/hook")
    stop = threading.Event()
    reads: list[str] = []
    try:
        notifier.sweeper.start(services, stop)
        assert services.listener is not None and services.listener.connected.wait(LONG)
        time.sleep(0.5)   # the relay's first look found nothing; it is asleep now
        event.listen(services.engine, "before_cursor_execute",
                     lambda _c, _k, statement, *_a: reads.append(statement))
        time.sleep(1.0)
        assert reads == []   # idle: not a single statement
        activity_id = world.submit(world.root_id)
        deadline = time.monotonic() + LONG / 2
        while True:
            with services.session_factory() as session:
                row = session.scalars(select(WebhookDelivery).where(
                    WebhookDelivery.activity_id == activity_id,
                    WebhookDelivery.endpoint_id == endpoint_id)).one()
            if row.dispatched_until is not None:
                break
            assert time.monotonic() < deadline, "the relay was not woken by the new row"
            time.sleep(0.05)
        assert services.broker.queues[queues.NOTIFICATIONS].qsize() >= 1
    finally:
        stop.set()
        services.stop_listening()
        services.engine.dispose()
