"""Benchmark: policy-engine evaluation time per activity with 1, 10 and 100 policies.

Run: ``.venv/bin/python -m bench.policy [--rounds N]``

Every figure is measured in the same run and also reported as a ratio to a baseline: evaluating
the same activity against an empty policy set (which still builds the variables, checks hard
denials and the root quorum). Policies are a realistic mix (kind/resource checks, ``eth.tx``
conditions, tag-based consensus, a time window, one that errors) and none of them allows, so
every policy is evaluated each time. "warm CPU" is this thread's CPU time (least of the
batches), steadier than the wall-clock median on a shared machine. "cold" includes parsing
and compiling every policy once (the per-process caches of compiled policies and expressions
are cleared first); "warm" is the steady state of the worker that decides activities.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from infra.pipeline.engine import Policy, Proposal, RootQuorum, clear_compiled, evaluate
from infra.policy.variables import eth_tx_variable, user_variable

_TEMPLATES = [
    ("EFFECT_ALLOW", "activity.kind == 'CREATE_WALLET' && activity.action == 'CREATE'",
     "approvers.any(user, user.id == 'user-{i}')", ""),
    ("EFFECT_ALLOW", "eth.tx.to == '0x{i:040x}' && eth.tx.value < 1000000000000000000",
     "approvers.filter(user, user.tags.contains('tag-{i}')).count() >= 2", ""),
    ("EFFECT_DENY", "activity.resource == 'POLICY' && activity.action == 'DELETE'", "", ""),
    ("EFFECT_ALLOW", "activity.kind == 'SIGN_TRANSACTION' && eth.tx.chain_id == {i}", "",
     "time.now >= Timestamp('2020-01-01T00:00:00Z') && "
     "time.now < Timestamp('2021-01-01T00:00:00Z')"),
    ("EFFECT_ALLOW", "wallet.id == 'wallet-{i}' || private_key.id == 'key-{i}'", "", ""),
    ("EFFECT_DENY", "eth.tx.data[0..10] == '0x095ea7b3' && eth.tx.to in ['0x{i:040x}', '0x00']",
     "", ""),
]  # fmt: skip


def make_policies(count: int) -> list[Policy]:
    """``count`` distinct policies cycling through the templates."""
    policies = []
    for i in range(count):
        effect, condition, consensus, window = _TEMPLATES[i % len(_TEMPLATES)]
        policies.append(
            Policy(f"policy-{i}", effect, condition.format(i=i), consensus.format(i=i), window)
        )
    return policies


def make_proposal() -> Proposal:
    """An Ethereum signature submitted by one user, waiting on nothing."""
    tx = eth_tx_variable(
        {
            "to": "0x" + "ab" * 20,
            "value": 5,
            "chain_id": 1,
            "nonce": 0,
            "data": "0xa9059cbb" + "00" * 64,
            "type": "TYPE_2",
        }
    )
    return Proposal(
        "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", {"type": "TRANSACTION_TYPE_ETHEREUM"}, "alice",
        [user_variable("alice", tags=["ops"])], context={"eth": {"tx": tx},
                                                         "wallet": {"id": "w", "label": ""}},
        now=datetime(2026, 3, 10, 15, 0, tzinfo=UTC),
    )  # fmt: skip


def per_call(fn: Callable[[], object], rounds: int, repeat: int = 5) -> tuple[float, float]:
    """Seconds per call over ``repeat`` batches of ``rounds`` calls: the median wall time, and
    the least CPU time of this thread (what a shared, busy machine's preemption leaves out)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.thread_time()
        for _ in range(rounds):
            fn()
        cpu.append((time.thread_time() - start_cpu) / rounds)
        wall.append((time.perf_counter() - start) / rounds)
    return statistics.median(wall), min(cpu)


def cold(policies: list[Policy], proposal: Proposal, quorum: RootQuorum) -> float:
    """Seconds for the first evaluation of ``policies`` (parse + compile + evaluate)."""
    clear_compiled()
    start = time.perf_counter()
    evaluate(policies, proposal, quorum)
    return time.perf_counter() - start


def main() -> None:
    """Print a table of per-activity evaluation times and ratios to the baseline."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    proposal, quorum = make_proposal(), RootQuorum(1, frozenset({"root"}))
    baseline, baseline_cpu = per_call(lambda: evaluate([], proposal, quorum), args.rounds * 10)
    print(f"baseline (0 policies): {baseline * 1e6:9.1f} µs/activity "
          f"(CPU {baseline_cpu * 1e6:.1f} µs)")
    print(f"{'policies':>8} {'warm µs':>10} {'x baseline':>11} {'µs/policy':>10} {'cold ms':>8} "
          f"{'warm CPU µs':>12}")
    for count in (1, 10, 100):
        policies = make_policies(count)
        decision = evaluate(policies, proposal, quorum)
        assert len(decision.policy_outcomes) == count
        first = cold(policies, proposal, quorum)
        evaluate(policies, proposal, quorum)
        warm, warm_cpu = per_call(
            lambda p=policies: evaluate(p, proposal, quorum),  # type: ignore[misc]
            max(10, args.rounds * 10 // count),
        )
        print(
            f"{count:>8} {warm * 1e6:>10.1f} {warm / baseline:>11.1f} "
            f"{(warm - baseline) / count * 1e6:>10.1f} {first * 1e3:>8.2f} {warm_cpu * 1e6:>12.1f}"
        )


if __name__ == "__main__":
    main()
