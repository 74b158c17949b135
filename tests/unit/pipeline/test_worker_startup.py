"""Starting one dramatiq worker per queue on one broker logs no duplicate-middleware warning.

Each dramatiq ``Worker`` registers its own ``_WorkerMiddleware``; the broker warned for every
pool after the first (six lines for four queues at every ``walletd up``). The filter that
drops them is narrow: a genuinely duplicated middleware still warns.
"""

from __future__ import annotations

import logging
import threading

import pytest
from dramatiq.middleware import AgeLimit

from infra.messaging import queues
from tests.unit.pipeline.conftest import Pipeline
from walletd.processes import start_workers

DUPLICATE = "same type twice"


def test_one_pool_per_queue_starts_without_duplicate_middleware_warnings(
        pipeline: Pipeline, caplog: pytest.LogCaptureFixture) -> None:
    stop = threading.Event()
    with caplog.at_level(logging.WARNING, logger="dramatiq"):
        workers = start_workers(pipeline.services, set(queues.ALL), 1, stop, sweep=False)
    try:
        assert set(workers.by_queue) == set(queues.ALL)
        assert [r.getMessage() for r in caplog.records if DUPLICATE in r.getMessage()] == []

        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="dramatiq"):
            pipeline.services.broker.add_middleware(AgeLimit())  # the broker has one already
        assert any(DUPLICATE in r.getMessage() and "AgeLimit" in r.getMessage()
                   for r in caplog.records)
    finally:
        stop.set()
        workers.stop(timeout=10_000)


def test_pools_stop_together(pipeline: Pipeline) -> None:
    """Every pool's threads are gone after one stop (they were stopped in parallel)."""
    stop = threading.Event()
    workers = start_workers(pipeline.services, set(queues.ALL), 2, stop, sweep=False)
    workers.stop(timeout=10_000)
    alive = [t.name for w in workers.by_queue.values()
             for t in [*w.workers, *w.consumers.values()] if t.is_alive()]
    assert alive == []
