"""Webhooks at scale on the production path: a backlog drains at the receiver's pace.

Starts walletd as production runs it (``walletd migrate``/``bootstrap``, gunicorn ``walletd
ingress``, one ``walletd worker`` process per queue group, over a fresh PostgreSQL database
and RabbitMQ vhost: ``tests.support.deployment``) and webhook receivers in processes of their
own (``bench/webhook_receiver.py``: HTTP/1.1 keep-alive on 127.0.0.1). Then, in one run:

0. **receiver capacity**: the fast receiver (2 ms per answer) is sent ``--capacity`` signed
   POSTs directly, over kept-alive connections, as many at once as the notifier may send to
   one endpoint: the most the receiver itself can take from a Python client, the figure the
   notifier is held to (measured before and after phase 1, the mean is quoted);
1. **backlog**: one endpoint (``ACTIVITY_UPDATES``) on that receiver answering 503 while
   ``--signatures`` ``sign_raw_payload`` activities are submitted (two events each:
   submission and completion); once every event has been tried (and refused) at least once,
   the receiver answers 200 in 2 ms. Measured: deliveries/s from that switch until every row
   has ``SUCCEEDED`` (and from the first 200 to the last, the receiver's own view), CPU per
   delivery by process;
2. **slow and fast side by side**: the first endpoint is deleted; a slow receiver (300 ms) and
   a fast one (2 ms) get the events of ``--mixed`` more signatures. Measured: the slow one's
   most requests at once (the per-endpoint cap: no more), its rate against the cap's
   theoretical one, and when the fast one was done compared with the slow one (not starved).

Counted throughout: events answered 200 twice (duplicates; no fault is injected) and
PostgreSQL deadlocks (``pg_stat_database.deadlocks`` of the run's database, and
"deadlock" in the processes' logs).

    .venv/bin/python bench/webhooks.py [--signatures 600] [--mixed 100] [--notifier-threads 8]
        [--notifier-processes 1]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
import requests

from bench.harness import ProcessCpu, cpu_table, run_load
from bench.sign import Profiler, create_signer, stamped_signs
from infra.clock import now_ms
from infra.webhooks.signing import WebhookSigningKey, sign_delivery
from tests.support import services
from tests.support.deployment import Deployment, free_port

ROOT = Path(__file__).resolve().parents[1]


class Receiver:
    """A ``bench/webhook_receiver.py`` process."""

    def __init__(self, name: str, *, status: int = 200, delay_ms: float = 2.0) -> None:
        self.name = name
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "webhook_receiver.py"), "--port", str(self.port),
             "--status", str(status), "--delay-ms", str(delay_ms)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        wait(lambda: self._up(), 30, "receiver did not start")

    def _up(self) -> bool:
        try:
            return requests.get(self.base + "/stats", timeout=1).ok
        except requests.RequestException:
            return False

    @property
    def url(self) -> str:
        return self.base + "/hook"

    def control(self, **values: Any) -> None:
        requests.get(self.base + "/control", params=values, timeout=10).raise_for_status()

    def stats(self) -> dict[str, Any]:
        return dict(requests.get(self.base + "/stats", timeout=30).json())

    def reset(self) -> None:
        requests.get(self.base + "/reset", timeout=10).raise_for_status()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def wait(predicate: Callable[[], bool], timeout: float, what: str, poll_s: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(poll_s)


_CONNECTIONS: dict[str, psycopg.Connection[Any]] = {}


def sql(database_url: str, query: str, *params: Any) -> list[Any]:
    """One query on a connection kept for the run (polling opens no backend each time)."""
    conn = _CONNECTIONS.get(database_url)
    if conn is None or conn.closed:
        conn = _CONNECTIONS[database_url] = psycopg.connect(database_url, autocommit=True)
    return conn.execute(query, params).fetchall()


def states(database_url: str, endpoint_id: str) -> dict[str, int]:
    rows = sql(database_url, "SELECT status, count(*) FROM webhook_deliveries WHERE endpoint_id = %s "
                             "GROUP BY status", endpoint_id)
    return {status: n for status, n in rows}


def deadlocks(database_url: str) -> int:
    name = database_url.rsplit("/", 1)[1]
    rows = sql(services.PG_ADMIN_URL, "SELECT deadlocks FROM pg_stat_database WHERE datname = %s", name)
    return int(rows[0][0]) if rows else 0


def duplicates(stats: dict[str, Any]) -> int:
    return sum(1 for times in stats["accepted"].values() if len(times) > 1)


def create_endpoint(dep: Deployment, url: str, name: str) -> str:
    from turnkey_sdk_types import CreateWebhookEndpointBody, v1WebhookSubscriptionParams

    response = dep.client().create_webhook_endpoint(CreateWebhookEndpointBody(
        url=url, name=name, subscriptions=[v1WebhookSubscriptionParams(eventType="ACTIVITY_UPDATES")]))
    return str(response.endpointId)


def delete_endpoint(dep: Deployment, endpoint_id: str) -> None:
    from turnkey_sdk_types import DeleteWebhookEndpointBody

    dep.client().delete_webhook_endpoint(DeleteWebhookEndpointBody(endpointId=endpoint_id))


def capacity(receiver: Receiver, count: int, concurrency: int) -> tuple[float, dict[str, float]]:
    """Signed POSTs straight to the receiver over kept-alive connections: its rate and CPU."""
    key = WebhookSigningKey.generate()
    body = b'{"id":"capacity","status":"ACTIVITY_STATUS_COMPLETED"}'
    load = []
    for i in range(count):
        headers = sign_delivery(key, body=body, event_id=f"capacity-{i}", event_type="ACTIVITY_UPDATES",
                                organization_id="o", timestamp_ms=now_ms())
        load.append((receiver.url, body, {**headers, "Content-Type": "application/json"}))
    cpu = ProcessCpu({"receiver": receiver.proc.pid}, {})
    result = run_load("receiver capacity", load, concurrency, lambda r: r.status_code == 200)
    return result.rate, cpu.per_item_ms(count)


def submit(dep: Deployment, address: str, count: int, concurrency: int, salt: str) -> float:
    load = stamped_signs(dep, address, count, salt)
    result = run_load(f"{count} signatures", load, concurrency, lambda r: r.status_code == 200)
    if result.ok != count:
        raise RuntimeError(f"only {result.ok}/{count} signatures completed")
    return result.rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signatures", type=int, default=600)
    parser.add_argument("--mixed", type=int, default=100, help="signatures of phase 2")
    parser.add_argument("--capacity", type=int, default=3000, help="direct POSTs of phase 0")
    parser.add_argument("--concurrency", type=int, default=8, help="clients submitting")
    parser.add_argument("--notifier-threads", type=int, default=8)
    parser.add_argument("--notifier-processes", type=int, default=1,
                        help="notifier worker processes (the per-endpoint cap holds across them)")
    parser.add_argument("--keep", type=Path, help="keep the deployment's logs in this directory")
    parser.add_argument("--profile", action="store_true",
                        help="py-spy every walletd process while the backlog drains")
    args = parser.parse_args()
    cap = max(2, args.notifier_threads // 2)

    work = args.keep or Path(tempfile.mkdtemp(prefix="walletd-bench-webhooks-"))
    work.mkdir(parents=True, exist_ok=True)
    db, vhost = services.create_database(), services.create_vhost()
    receivers: list[Receiver] = []
    dep: Deployment | None = None
    try:
        dep = Deployment.production(work, db, vhost, extra_env={
            "WALLETD_WEBHOOK_ALLOW": "127.0.0.1",
            "WALLETD_WORKER_THREADS_NOTIFICATIONS": str(args.notifier_threads)})
        if args.notifier_processes != 1:
            dep.kill("notifier", signal.SIGTERM)
            dep.start_worker("notifier", args.notifier_processes)
        address = create_signer(dep)
        walletd = {name: proc.pid for name, proc in dep.processes.items()}
        deadlocks_before = deadlocks(db)
        fast = Receiver("fast", delay_ms=2)
        receivers.append(fast)

        # 0. what the receiver itself takes, at the notifier's concurrency for one endpoint
        capacity(fast, 300, cap)  # warm-up
        receiver_rate, receiver_cpu = capacity(fast, args.capacity, cap)
        fast.reset()

        # 1. a backlog while the receiver answers 503, then 200 in 2 ms
        fast.control(status=503)
        endpoint = create_endpoint(dep, fast.url, "bench fast")
        submit_rate = submit(dep, address, args.signatures, args.concurrency, "backlog")
        wait(lambda: not sql(db, "SELECT 1 FROM webhook_deliveries WHERE endpoint_id = %s AND "
                                 "attempts = 0 LIMIT 1", endpoint),
             600, "not every event was tried")
        backlog = sum(states(db, endpoint).values())
        cpu = ProcessCpu({**walletd, "receiver": fast.proc.pid}, None, db.rsplit("/", 1)[1])
        profiler = Profiler(dep, work) if args.profile else None
        switched = time.time()
        fast.control(status=200, delay_ms=2)
        wait(lambda: states(db, endpoint).get("PENDING", 0) == 0, 1800, "backlog did not drain")
        drained = time.time()
        if profiler is not None:
            profiler.stop()
        backlog_cpu = cpu.per_item_ms(backlog)
        seen = fast.stats()
        succeeded = states(db, endpoint).get("SUCCEEDED", 0)
        first, last = seen["first_at"], seen["last_at"]
        dup_backlog = duplicates(seen)
        # The receiver's capacity again, right after: the machine's load drifts; the mean of
        # the two measurements brackets the drain.
        receiver_after, _ = capacity(fast, args.capacity, cap)
        receiver_before, receiver_rate = receiver_rate, (receiver_rate + receiver_after) / 2

        # 2. a slow receiver and a fast one side by side
        delete_endpoint(dep, endpoint)
        slow = Receiver("slow", delay_ms=300)
        other = Receiver("other", delay_ms=2)
        receivers += [slow, other]
        slow_id = create_endpoint(dep, slow.url, "bench slow")
        other_id = create_endpoint(dep, other.url, "bench other")
        mixed_started = time.time()
        submit(dep, address, args.mixed, args.concurrency, "mixed")
        wait(lambda: states(db, other_id).get("PENDING", 0) == 0, 600, "other endpoint not drained")
        other_done = time.time()
        wait(lambda: states(db, slow_id).get("PENDING", 0) == 0, 1800, "slow endpoint not drained")
        slow_done = time.time()
        slow_seen, other_seen = slow.stats(), other.stats()
        slow_events = states(db, slow_id).get("SUCCEEDED", 0)
        deadlocks_run = deadlocks(db) - deadlocks_before
        logged = sum(path.read_text(errors="replace").lower().count("deadlock")
                     for path in work.glob("*.log"))

        print(f"production path: gunicorn, PostgreSQL, RabbitMQ, worker processes; notifier "
              f"{args.notifier_processes} process(es) of {args.notifier_threads} threads, at most "
              f"{cap} deliveries in flight per endpoint")
        print(f"0. receiver capacity (direct keep-alive POSTs, {cap} at once, 2 ms each): "
              f"{receiver_rate:.1f}/s (before the backlog {receiver_before:.1f}/s, after "
              f"{receiver_after:.1f}/s)")
        print(cpu_table("   receiver capacity", receiver_cpu).replace("request", "POST"))
        print(f"1. backlog: {args.signatures} signatures submitted at {submit_rate:.1f}/s while the "
              f"receiver answered 503; {backlog} events tried and waiting")
        print(f"   drained (all SUCCEEDED: {succeeded}/{backlog}) {drained - switched:.1f} s after the "
              f"receiver answered 200: {backlog / (drained - switched):.1f} deliveries/s")
        if first and last:
            print(f"   receiver's view, first 200 to last: {last - first:.1f} s: "
                  f"{len(seen['accepted']) / max(last - first, 1e-9):.1f} deliveries/s "
                  f"(first 200 {first - switched:.1f} s after the switch); "
                  f"ratio to the receiver's capacity: "
                  f"{len(seen['accepted']) / max(last - first, 1e-9) / receiver_rate:.2f}")
        print(f"   most requests at once at the receiver: {seen['max_in_flight']} (cap {cap})")
        print(cpu_table("   backlog", backlog_cpu).replace("request", "delivery"))
        print(f"2. slow (300 ms) and fast (2 ms) endpoints, {args.mixed} signatures "
              f"({slow_events} events each)")
        print(f"   slow: drained in {slow_done - mixed_started:.1f} s, "
              f"{slow_events / (slow_done - mixed_started):.1f} deliveries/s "
              f"(cap {cap} / 0.3 s = {cap / 0.3:.1f}/s at most); most at once: "
              f"{slow_seen['max_in_flight']}")
        print(f"   fast: drained in {other_done - mixed_started:.1f} s while the slow one took "
              f"{slow_done - mixed_started:.1f} s; most at once: {other_seen['max_in_flight']}")
        print(f"duplicates (an event answered 200 twice, no fault injected): backlog {dup_backlog}, "
              f"slow {duplicates(slow_seen)}, fast {duplicates(other_seen)}")
        print(f"PostgreSQL deadlocks: {deadlocks_run} (pg_stat_database), {logged} in the logs")
        print(json.dumps({"deliveries_per_s": round(backlog / (drained - switched), 1),
                          "receiver_capacity_per_s": round(receiver_rate, 1),
                          "duplicates": dup_backlog + duplicates(slow_seen) + duplicates(other_seen),
                          "deadlocks": deadlocks_run}))
        if profiler is not None:
            print(profiler.report())
    finally:
        for conn in _CONNECTIONS.values():
            conn.close()
        for receiver in receivers:
            receiver.stop()
        if dep is not None:
            dep.stop()
        services.drop_database(db)
        services.delete_vhost(vhost)


if __name__ == "__main__":
    main()
