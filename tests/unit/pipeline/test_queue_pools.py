"""Every queue has its own worker pool: a blocked queue never delays another.

Real dramatiq workers (``walletd.processes.start_workers``, as ``walletd up`` and
``walletd worker --queues signing,accounts`` start them) on the real in-process StubBroker;
the actors are test actors that block on / signal events.
"""

from __future__ import annotations

import dataclasses
import threading

import dramatiq

from infra.messaging import queues
from infra.settings import Settings
from tests.unit.pipeline.conftest import Pipeline
from walletd.processes import start_workers


def _declare(pipeline: Pipeline, queue: str, body) -> dramatiq.Actor:  # type: ignore[no-untyped-def]
    return dramatiq.actor(broker=pipeline.services.broker, actor_name=f"test_on_{queue}",
                          queue_name=queue, max_retries=0)(body)


def test_a_blocked_queue_does_not_delay_the_others(pipeline: Pipeline) -> None:
    release = threading.Event()
    blocked = threading.Event()
    done: dict[str, threading.Event] = {q: threading.Event() for q in queues.ALL}

    def block(n: int) -> None:
        blocked.set()
        release.wait(60)

    signing = _declare(pipeline, queues.SIGNING, block)
    others = {q: _declare(pipeline, q, lambda n, q=q: done[q].set())
              for q in (queues.CONSENSUS, queues.ACCOUNTS, queues.NOTIFICATIONS)}
    stop = threading.Event()
    # One thread per queue (WALLETD_WORKER_THREADS=1): with a single shared pool, the one
    # thread busy on signing would hold every other message back until it is released.
    workers = start_workers(pipeline.services, set(queues.ALL), None, stop, sweep=False)
    try:
        assert {name: len(w.workers) for name, w in workers.by_queue.items()} == {
            q: 1 for q in queues.ALL}
        signing.send(0)
        signing.send(1)   # a backlog behind the blocked message
        assert blocked.wait(30)
        for actor in others.values():
            actor.send(0)
        for queue in others:
            assert done[queue].wait(30), f"{queue} was starved by the blocked signing queue"
        assert not release.is_set()   # signing was still blocked the whole time
    finally:
        release.set()
        stop.set()
        workers.stop(timeout=10_000)


def test_each_queue_gets_its_own_thread_count(pipeline: Pipeline) -> None:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(pipeline.services.settings.data_dir),
                                  "WALLETD_WORKER_THREADS": "2",
                                  "WALLETD_WORKER_THREADS_SIGNING": "3"})
    services = dataclasses.replace(pipeline.services, settings=settings)  # frozen: a copy
    stop = threading.Event()
    workers = start_workers(services, {queues.SIGNING, queues.ACCOUNTS}, None, stop, sweep=False)
    try:
        assert {n: len(w.workers) for n, w in workers.by_queue.items()} == {
            queues.SIGNING: 3, queues.ACCOUNTS: 2}
        assert {n: w.consumer_whitelist for n, w in workers.by_queue.items()} == {
            queues.SIGNING: {queues.SIGNING}, queues.ACCOUNTS: {queues.ACCOUNTS}}
    finally:
        stop.set()
        workers.stop(timeout=10_000)
