"""The chaos run's rules for answers and faults (``bench/chaos.py``), without servers."""

from __future__ import annotations

import random
from collections import Counter

from bench.chaos import HOLD_BACK, Answer, Config, Fault, count_answers, schedule

PG = Fault("restart PostgreSQL", 0.5, injected_at=100.0, down_s=2.5, recovered_after_s=4.0)
MQ = Fault("restart RabbitMQ", 0.2, injected_at=50.0, down_s=20.0, recovered_after_s=22.0)


def _count(*answers: Answer) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    problems: list[str] = []
    count_answers(list(answers), [MQ, PG], counts, problems)
    return counts, problems


def test_a_503_unavailable_inside_the_postgresql_outage_is_the_documented_answer() -> None:
    counts, problems = _count(Answer(101.0, "/x", 503, 14, ""),
                              Answer(100.0 + 4.0 + 4.9, "/x", 503, 14, ""))
    assert (counts["5xx in the DB outage"], counts["5xx outside the DB outage"]) == (2, 0)
    assert problems == []


def test_other_5xx_count_as_violations() -> None:
    counts, problems = _count(
        Answer(101.0, "/x", 500, 13, "internal error"),    # not UNAVAILABLE, even in the outage
        Answer(60.0, "/x", 503, 14, "broker"),             # during the RabbitMQ restart
        Answer(100.0 + 4.0 + 5.1, "/x", 503, 14, "late"),  # after the outage's tail
        Answer(10.0, "/x", 502, None, ""))                 # no fault at all
    assert (counts["5xx in the DB outage"], counts["5xx outside the DB outage"]) == (0, 4)
    assert len(problems) == 4
    assert "restart RabbitMQ" in problems[1] and "no fault" in problems[3]


def test_answers_without_a_status_are_counted_as_retried() -> None:
    counts, _ = _count(Answer(1.0, "/x", 0, None, "ConnectionError"),
                       Answer(2.0, "/x", 200, None, ""))
    assert (counts["requests"], counts["no answer (retried)"]) == (2, 1)


def test_the_schedule_has_every_fault_once_spread_before_the_held_back_tail() -> None:
    faults = schedule(Config(worker_kills=5, ingress_kills=3), random.Random(3))
    names = [f.name for f in faults]
    assert names.count("restart RabbitMQ") == names.count("restart PostgreSQL") == 1
    assert sum(n.startswith("SIGKILL worker ") for n in names) == 5
    assert names.count("SIGKILL gunicorn worker") == 3
    fractions = [f.at_fraction for f in faults]
    assert fractions == sorted(fractions) and fractions[0] > 0 and fractions[-1] < HOLD_BACK
