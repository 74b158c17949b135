"""Webhooks in the chaos run: three endpoints and what became of every event they were owed.

The root organization (whose endpoints receive its sub-organizations' events too) gets three
``ACTIVITY_UPDATES`` endpoints on receivers in processes of their own
(``bench/webhook_receiver.py``): **fast** (2 ms), **slow** (``slow_ms``, 300 by default) and
**flapping** (2 ms, every ``flap``-th request answered 503). While the chaos run kills
processes (the notifier among them) and restarts PostgreSQL, the notifier delivers; once the
activities have settled, the run waits (bounded) until no delivery is due within a minute,
then counts, per status change of an activity (event) and endpoint:

- **lost**: owed but never answered 200 (the row is not ``SUCCEEDED``, or the receiver never
  accepted its event id), or an activity's final status with no event row at all;
- **retry scheduled at the end**: a ``PENDING`` row that failed three times or more and whose
  next try, by the retry schedule, is more than a minute away (not a loss: a delivery that has
  failed four times waits four to six minutes, longer than a run should);
- **duplicate, no fault near**: answered 200 twice although no fault was under way between
  (5 s before) the first acceptance and the second;
- **duplicate across a fault**: answered 200 twice with a fault in that span (at-least-once:
  a notifier killed between the receiver's answer and the record sends it again).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import requests

ROOT = Path(__file__).resolve().parents[1]
#: A duplicate is across a fault that was under way between its first acceptance (less this
#: margin: the record of an answer follows it by a moment) and its second.
FAULT_REACH_S = 5.0
#: The end of the run waits for every delivery due within this many seconds; one whose next
#: retry lies beyond it is counted as scheduled (it has failed at least three times).
SETTLE_HORIZON_S = 60.0


@dataclass
class Receiver:
    """A ``bench/webhook_receiver.py`` process."""

    name: str
    delay_ms: float
    flap: int = 0
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    def start(self, port: int) -> None:
        self.port = port
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "webhook_receiver.py"), "--port", str(port),
             "--delay-ms", str(self.delay_ms)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                requests.get(f"{self.base}/control", params={"flap": self.flap}, timeout=1).raise_for_status()
                return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError(f"webhook receiver {self.name} did not start")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict[str, Any]:
        return dict(requests.get(self.base + "/stats", timeout=60).json())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@dataclass
class WebhookWatch:
    """The chaos run's endpoints, their receivers, and the count at the end."""

    slow_ms: float = 300.0
    flap: int = 10
    settle_timeout_s: float = 300.0
    receivers: list[Receiver] = field(default_factory=list)
    #: endpoint id -> receiver
    endpoints: dict[str, Receiver] = field(default_factory=dict)
    #: The database's clock once every endpoint existed (activities after it owe events).
    registered_at: Any = None

    def start(self, free_port: Callable[[], int]) -> None:
        self.receivers = [Receiver("fast", 2.0), Receiver("slow", self.slow_ms),
                          Receiver("flapping", 2.0, flap=self.flap)]
        for receiver in self.receivers:
            receiver.start(free_port())

    def register(self, create: Callable[[dict[str, Any]], dict[str, Any]], database_url: str) -> None:
        """Create one endpoint per receiver with ``create(params) -> result``."""
        for receiver in self.receivers:
            result = create({"url": f"{receiver.base}/hook", "name": f"chaos {receiver.name}",
                             "subscriptions": [{"eventType": "ACTIVITY_UPDATES"}]})
            self.endpoints[result["endpointId"]] = receiver
        with psycopg.connect(database_url, autocommit=True) as conn:
            row = conn.execute("SELECT now()").fetchone()
        self.registered_at = row[0] if row else None

    def stop(self) -> None:
        for receiver in self.receivers:
            receiver.stop()

    def settle(self, database_url: str) -> int:
        """Wait (bounded) until no delivery is pending but those whose next retry lies beyond
        :data:`SETTLE_HORIZON_S` (a delivery that failed three times waits 64-96 s for its
        fourth try, one that failed four 4-6 min: the schedule's, not a loss); returns how
        many are still pending."""
        deadline = time.monotonic() + self.settle_timeout_s
        pending = -1
        while time.monotonic() < deadline:
            with psycopg.connect(database_url, autocommit=True) as conn:
                row = conn.execute(
                    "SELECT count(*), count(*) FILTER (WHERE next_attempt_at <= now() + "
                    "make_interval(secs => %s) OR sending_until > now()) "
                    "FROM webhook_deliveries WHERE status = 'PENDING'",
                    (SETTLE_HORIZON_S,)).fetchone()
            pending, due = (int(row[0]), int(row[1])) if row else (0, 0)
            if due == 0:
                return pending
            time.sleep(1.0)
        return pending

    def count(self, database_url: str, faults: list[tuple[str, float, float]],
              counts: dict[str, int], problems: list[str]) -> None:
        """``faults``: (name, wall-clock start, wall-clock end) of every fault injected."""
        with psycopg.connect(database_url, autocommit=True) as conn:
            rows = conn.execute("SELECT id, event_id, endpoint_id, status, attempts, body, "
                                "next_attempt_at > now() + make_interval(secs => %s) "
                                "FROM webhook_deliveries", (SETTLE_HORIZON_S,)).fetchall()
            activities = conn.execute("SELECT id, status FROM activities WHERE created_at > %s",
                                      (self.registered_at,)).fetchall()
        seen = {endpoint: receiver.stats() for endpoint, receiver in self.endpoints.items()}
        for name in ("webhook events", "webhook lost", "webhook retry scheduled at the end",
                     "webhook duplicates, no fault near", "webhook duplicates across a fault"):
            counts[name] = 0
        final: set[tuple[str, str, str]] = set()
        for delivery_id, event_id, endpoint_id, status, attempts, body, later in rows:
            if endpoint_id not in self.endpoints:
                continue
            counts["webhook events"] += 1
            activity = json.loads(body)
            final.add((activity.get("id", ""), activity.get("status", ""), endpoint_id))
            name = self.endpoints[endpoint_id].name
            accepted = seen[endpoint_id]["accepted"].get(event_id, [])
            if status == "PENDING" and later and attempts >= 3 and not accepted:
                # Failed three times or more (the flapping receiver's 503s, attempts cut by
                # a fault) and waiting its turn: owed still, by the schedule, not lost.
                counts["webhook retry scheduled at the end"] += 1
                problems.append(f"webhook retry scheduled at the end: {name} delivery "
                                f"{delivery_id} event {event_id} after {attempts} attempts")
                continue
            if status != "SUCCEEDED" or not accepted:
                counts["webhook lost"] += 1
                problems.append(f"webhook lost: {name} delivery {delivery_id} event {event_id} "
                                f"{status} after {attempts} attempts, accepted {len(accepted)}x")
                continue
            if len(accepted) > 1:
                first, last = min(accepted), max(accepted)
                near = [f for f, start, end in faults if first - FAULT_REACH_S <= end and start <= last]
                key = "webhook duplicates across a fault" if near else "webhook duplicates, no fault near"
                counts[key] += 1
                problems.append(f"{key}: {name} event {event_id} accepted {len(accepted)}x "
                                f"({last - first:.1f} s apart; faults: {', '.join(near) or 'none'})")
        # Every activity's final status was owed to every endpoint (the outbox wrote it).
        for activity_id, status in activities:
            for endpoint_id, receiver in self.endpoints.items():
                if (activity_id, status, endpoint_id) not in final:
                    counts["webhook lost"] += 1
                    problems.append(f"webhook lost: {receiver.name} has no event for activity "
                                    f"{activity_id} {status}")
        for endpoint_id, receiver in self.endpoints.items():
            stats = seen[endpoint_id]
            counts[f"webhook {receiver.name}: requests"] = stats["requests"]
            counts[f"webhook {receiver.name}: most at once"] = stats["max_in_flight"]
