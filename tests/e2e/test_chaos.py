"""A short chaos run: a few hundred mixed activities while processes die and servers restart.

``bench/chaos.py`` (``make chaos`` runs 10,000) against the production path on a private
PostgreSQL cluster and a private RabbitMQ node (the machine's shared ones are never touched).
Every submitted body must end as exactly one activity with exactly one effect, nothing may be
left in flight, and no 5xx may be answered outside the PostgreSQL outage. Every webhook event
owed to the run's three endpoints (fast, slow, flapping) must be answered 200, and none twice
unless a fault came between.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.chaos import COMPLETED, Config, run_chaos
from tests.support import private_services
from tests.support.services import CI

ACTIVITIES = 150


@pytest.mark.timeout(1200)
def test_nothing_is_lost_duplicated_or_stuck_under_chaos(tmp_path: Path) -> None:
    reason = private_services.available()
    if reason:
        if CI:
            pytest.fail(f"chaos run impossible under CI=true: {reason}")
        pytest.skip(reason)
    report = run_chaos(Config(activities=ACTIVITIES, concurrency=6, worker_kills=4,
                              ingress_kills=2, workdir=tmp_path), log=lambda _: None)
    print(report.render())  # the figures, with -s or on failure

    assert report.violations() == {}, report.render()
    # Every fault was injected while the load ran, and the service did work again after each.
    names = [f.name for f in report.faults]
    assert sum(n.startswith("SIGKILL worker ") for n in names) == 4
    assert sum(n.startswith("SIGKILL gunicorn worker ") for n in names) == 2
    assert {"restart RabbitMQ", "restart PostgreSQL"} <= set(names)
    assert all(f.during_load and f.recovered_after_s is not None for f in report.faults), \
        report.render()
    # Every body of the mix (and every approval and canary) completed.
    bodies = sum(v for k, v in report.counts.items() if k.startswith("bodies: "))
    assert bodies >= ACTIVITIES
    assert report.counts[f"status: {COMPLETED}"] == bodies, report.render()
    # ``walletd audit verify`` passed on the run's database after every fault (issue 22): a
    # leaf for each activity's creation and settlement at least, each matching its row.
    assert report.counts["audit log verified (leaves)"] >= 2 * bodies, report.render()
    # Webhooks (fast, slow, flapping endpoints; the notifier among the processes killed and
    # PostgreSQL restarted): every event owed was answered 200, none twice without a fault
    # (a duplicate across a fault is at-least-once doing its job), none left pending but
    # those the retry schedule holds back (failed three times or more, next try over a
    # minute away: counted apart, each checked in the database, bench/chaos_webhooks.py).
    assert any(n == "SIGKILL worker notifier" for n in names)
    counts = report.counts
    assert counts["webhook events"] >= 3 * bodies, report.render()
    assert counts["webhook lost"] == 0 and counts["webhook duplicates, no fault near"] == 0
    assert counts["webhook deliveries pending at the end"] == \
        counts["webhook retry scheduled at the end"], report.render()
    for name in ("fast", "slow", "flapping"):
        # Each endpoint was served, never by more runs at once than its cap (8 threads: 4).
        assert counts[f"webhook {name}: requests"] >= counts["webhook events"] // 3
        assert 1 <= counts[f"webhook {name}: most at once"] <= 4
