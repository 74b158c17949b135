"""A slow endpoint does not hold up deliveries to others (worker threads + relay running)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from dramatiq import Worker

from infra.messaging import queues
from notifier import sweeper
from notifier.actors import declare
from notifier.delivery import DeliveryConfig
from tests.support.webhook_receiver import Reply, WebhookReceiver
from tests.support.webhook_world import World


@pytest.fixture
def running(world: World) -> Iterator[World]:
    world.notifier.config = DeliveryConfig(connect_timeout_s=2, read_timeout_s=60)
    declare(world.services, world.notifier)
    worker = Worker(world.services.broker, queues={queues.NOTIFICATIONS}, worker_threads=4)
    worker.start()
    stop = threading.Event()
    sweeper.start(world.services, stop)
    yield world
    stop.set()
    worker.stop()


def test_hanging_endpoint_does_not_delay_another_endpoint(running: World) -> None:
    with WebhookReceiver(hang_limit_s=60) as slow, WebhookReceiver() as fast:
        slow.script([Reply(hang=True)] * 4)
        running.add_endpoint(running.root_id, slow.url)
        running.add_endpoint(running.root_id, fast.url)
        activity_id = running.submit(running.root_id)
        slow.wait_for(1, timeout_s=20)  # a worker thread is stuck inside the slow POST
        # Well inside the 60 s read timeout the slow request is still holding a thread.
        got = fast.wait_for(1, timeout_s=20)
        assert got[0].json()["id"] == activity_id
        assert len(slow.requests) == 1
        slow.release()
