"""Benchmark: webhook deliveries per second and the latency a webhook adds after an activity.

Run: ``.venv/bin/python -m bench.webhooks [--deliveries N] [--events N] [--threads N]
[--postgres]``

Everything runs in this process against a real HTTP receiver on 127.0.0.1: a fresh database
(SQLite by default; ``--postgres`` uses a fresh database on the local PostgreSQL), the in-memory broker, a
dramatiq worker on the ``notifications`` queue with ``--threads`` threads, and the outbox
relay. Two measurements, each against a baseline taken in the same run:

* **throughput**: ``--deliveries`` outbox rows are written by activities (the lifecycle
  listener hands them to the broker at commit), then the worker and relay are started and
  timed until every row has SUCCEEDED.
  Baseline: the same number of signed POSTs sent directly with the same number of threads
  (no database, no broker): what the HTTP side alone allows.
* **added latency**: ``--events`` activities are completed one at a time while the notifier
  runs; for each, the time from the commit of the COMPLETED status to the receiver getting
  its webhook. Baseline: one direct signed POST right after each event: the latency of the
  HTTP request alone. The difference is what the outbox, the relay poll and the broker add.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dramatiq import Worker
from sqlalchemy import func, select

from infra.clock import now_ms
from infra.db.models.webhooks import WebhookDelivery
from infra.messaging import queues
from infra.webhooks.signing import sign_delivery
from notifier import sweeper
from notifier.actors import declare
from notifier.delivery import attempt_delivery
from tests.support import services
from tests.support.webhook_receiver import WebhookReceiver
from tests.support.webhook_world import World, build_world


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def _direct_post(world: World, url: str) -> float:
    """One signed POST straight to the receiver; returns its latency in ms."""
    body = b'{"id":"baseline","organizationId":"o","status":"S","type":"T"}'
    key = world.notifier.keys.ring().signing_key(now_ms())
    headers = sign_delivery(
        key,
        body=body,
        event_id="baseline",
        event_type="ACTIVITY_UPDATES",
        organization_id="o",
        timestamp_ms=now_ms(),
    )
    started = time.perf_counter()
    record = attempt_delivery(url, body, headers, allow=world.notifier.allow)
    assert record.status_code == 200, record.error
    return (time.perf_counter() - started) * 1000


def _succeeded(world: World) -> int:
    with world.services.session_factory() as session:
        count = session.scalar(
            select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.status == "SUCCEEDED")
        )
    return int(count or 0)


def _wait(predicate: Callable[[], bool], timeout: float = 300.0, poll_s: float = 0.005) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark did not finish")
        time.sleep(poll_s)


def _start_notifier(world: World, threads: int) -> tuple[Worker, threading.Event]:
    declare(world.services)
    worker = Worker(world.services.broker, queues={queues.NOTIFICATIONS}, worker_threads=threads)
    worker.start()
    stop = threading.Event()
    sweeper.start(world.services, stop)
    return worker, stop


def throughput(world: World, receiver: WebhookReceiver, deliveries: int, threads: int) -> None:
    """Deliveries/s through outbox → relay → broker → actor → receiver, vs direct POSTs."""
    world.add_endpoint(world.root_id, receiver.url)
    for _ in range(deliveries):  # one row per submission (the PENDING event)
        world.submit(world.root_id)
    started = time.perf_counter()
    worker, stop = _start_notifier(world, threads)
    _wait(lambda: _succeeded(world) >= deliveries, poll_s=0.05)  # light on the database
    elapsed = time.perf_counter() - started
    stop.set()
    worker.stop()

    base_started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: _direct_post(world, receiver.url), range(deliveries)))
    base_elapsed = time.perf_counter() - base_started
    print(f"throughput ({deliveries} deliveries, {threads} threads)")
    print(f"  notifier:         {deliveries / elapsed:8.1f} deliveries/s")
    print(f"  baseline (POST):  {deliveries / base_elapsed:8.1f} posts/s")
    print(f"  ratio:            {(deliveries / elapsed) / (deliveries / base_elapsed):8.2f}")


def latency(world: World, receiver: WebhookReceiver, events: int, threads: int) -> None:
    """Commit-to-arrival latency of COMPLETED webhooks, vs a direct POST's latency."""
    worker, stop = _start_notifier(world, threads)
    base_receiver = WebhookReceiver().start()
    added: list[float] = []
    baseline: list[float] = []
    try:
        for _ in range(events):
            activity_id = world.submit(world.root_id)
            seen = len(receiver.requests)
            world.complete(activity_id)
            committed = time.perf_counter()
            _wait(functools.partial(_arrived, receiver, activity_id, seen), timeout=60)
            added.append((time.perf_counter() - committed) * 1000)
            baseline.append(_direct_post(world, base_receiver.url))
    finally:
        stop.set()
        worker.stop()
        base_receiver.stop()
    print(f"latency, activity COMPLETED commit -> webhook received ({events} events)")
    print(
        f"  notifier:         p50 {_percentile(added, 50):7.1f} ms   "
        f"p99 {_percentile(added, 99):7.1f} ms   mean {statistics.fmean(added):7.1f} ms"
    )
    print(
        f"  baseline (POST):  p50 {_percentile(baseline, 50):7.1f} ms   "
        f"p99 {_percentile(baseline, 99):7.1f} ms   mean {statistics.fmean(baseline):7.1f} ms"
    )
    print(f"  added by outbox+relay+broker: p50 {_percentile(added, 50) - _percentile(baseline, 50):7.1f} ms")


def _arrived(receiver: WebhookReceiver, activity_id: str, seen: int) -> bool:
    for request in receiver.requests[seen:]:
        payload = request.json()
        if payload.get("id") == activity_id and payload.get("status") == ("ACTIVITY_STATUS_COMPLETED"):
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=500)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--postgres", action="store_true", help="use a fresh PostgreSQL database")
    args = parser.parse_args()
    print(f"store: {'PostgreSQL' if args.postgres else 'SQLite'}; broker: in-memory")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("throughput", "latency"):
            database = services.create_database() if args.postgres else ""
            try:
                with WebhookReceiver() as receiver:
                    world = build_world(Path(tmp) / name, database_url=database)
                    if name == "throughput":
                        throughput(world, receiver, args.deliveries, args.threads)
                    else:
                        world.add_endpoint(world.root_id, receiver.url)
                        latency(world, receiver, args.events, args.threads)
                    world.services.engine.dispose()
            finally:
                if database:
                    services.drop_database(database)


if __name__ == "__main__":
    main()
