"""Retry classification and the persisted exponential schedule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infra.webhooks.schedule import (
    DAY_S,
    AttemptClass,
    DeliveryState,
    RetrySchedule,
    classify,
    decide,
    failing_too_long,
)

SCHEDULE = RetrySchedule()
NOW = 1_760_000_000_000


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (200, AttemptClass.SUCCESS),
        (201, AttemptClass.SUCCESS),
        (204, AttemptClass.SUCCESS),
        (299, AttemptClass.SUCCESS),
        (None, AttemptClass.RETRYABLE),
        (408, AttemptClass.RETRYABLE),
        (429, AttemptClass.RETRYABLE),
        (500, AttemptClass.RETRYABLE),
        (502, AttemptClass.RETRYABLE),
        (503, AttemptClass.RETRYABLE),
        (504, AttemptClass.RETRYABLE),
        (599, AttemptClass.RETRYABLE),
        (100, AttemptClass.TERMINAL),
        (301, AttemptClass.TERMINAL),
        (302, AttemptClass.TERMINAL),
        (307, AttemptClass.TERMINAL),
        (400, AttemptClass.TERMINAL),
        (401, AttemptClass.TERMINAL),
        (403, AttemptClass.TERMINAL),
        (404, AttemptClass.TERMINAL),
        (410, AttemptClass.TERMINAL),
        (422, AttemptClass.TERMINAL),
    ],
)
def test_classify_follows_the_protocol_table(status: int | None, expected: AttemptClass) -> None:
    assert classify(status) is expected


def test_default_schedule_spans_more_than_a_day_even_with_worst_jitter() -> None:
    assert SCHEDULE.shortest_span_s() >= DAY_S


def test_schedule_that_cannot_span_a_day_is_rejected() -> None:
    with pytest.raises(ValueError):
        RetrySchedule(max_attempts=4)


@pytest.mark.parametrize(
    "kwargs",
    [{"max_attempts": 0}, {"first_delay_s": 0}, {"factor": 0.5}, {"jitter": 1.0}],
)
def test_schedule_rejects_nonsense_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetrySchedule(**kwargs)  # type: ignore[arg-type]


@given(key=st.text(min_size=1, max_size=40))
def test_delays_grow_until_the_cap_and_stay_within_jitter(key: str) -> None:
    nominal = [SCHEDULE.nominal_delay_s(n) for n in range(1, SCHEDULE.max_attempts)]
    assert nominal == sorted(nominal)
    assert nominal[-1] == SCHEDULE.max_delay_s
    for n in range(1, SCHEDULE.max_attempts):
        delay = SCHEDULE.delay_s(n, jitter_key=key)
        assert delay is not None
        low, high = nominal[n - 1] * (1 - SCHEDULE.jitter), nominal[n - 1] * (1 + SCHEDULE.jitter)
        assert low <= delay <= high


@given(key=st.text(min_size=1, max_size=40))
def test_total_span_is_at_least_a_day_for_every_delivery(key: str) -> None:
    delays = [SCHEDULE.delay_s(n, jitter_key=key) for n in range(1, SCHEDULE.max_attempts)]
    assert sum(d for d in delays if d is not None) >= DAY_S


@given(key=st.text(min_size=1, max_size=40), attempts=st.integers(1, 10))
def test_jitter_is_reproducible_after_a_restart(key: str, attempts: int) -> None:
    assert SCHEDULE.delay_s(attempts, jitter_key=key) == RetrySchedule().delay_s(attempts, jitter_key=key)


def test_jitter_differs_between_deliveries() -> None:
    delays = {SCHEDULE.delay_s(3, jitter_key=f"delivery-{i}") for i in range(20)}
    assert len(delays) > 10


def test_attempts_are_exhausted_after_max_attempts() -> None:
    assert SCHEDULE.delay_s(SCHEDULE.max_attempts, jitter_key="k") is None
    with pytest.raises(ValueError):
        SCHEDULE.delay_s(0, jitter_key="k")


def test_decide_success_and_terminal_have_no_next_attempt() -> None:
    ok = decide(SCHEDULE, attempts_made=1, status_code=204, now_ms=NOW, jitter_key="d")
    gone = decide(SCHEDULE, attempts_made=1, status_code=410, now_ms=NOW, jitter_key="d")
    assert (ok.state, ok.next_attempt_at_ms) == (DeliveryState.SUCCEEDED, None)
    assert (gone.state, gone.next_attempt_at_ms) == (DeliveryState.FAILED, None)


@given(status=st.sampled_from([None, 408, 429, 500, 503]), attempts=st.integers(1, 10))
def test_decide_retryable_schedules_the_persisted_next_attempt(status: int | None, attempts: int) -> None:
    decision = decide(SCHEDULE, attempts_made=attempts, status_code=status, now_ms=NOW, jitter_key="d")
    assert decision.state is DeliveryState.PENDING
    delay = SCHEDULE.delay_s(attempts, jitter_key="d")
    assert delay is not None
    assert decision.next_attempt_at_ms == NOW + round(delay * 1000)


def test_decide_fails_after_the_last_retryable_attempt() -> None:
    decision = decide(
        SCHEDULE, attempts_made=SCHEDULE.max_attempts, status_code=500, now_ms=NOW, jitter_key="d"
    )
    assert decision.state is DeliveryState.FAILED
    assert "exhausted" in decision.reason


def test_retry_after_lengthens_but_never_shortens_and_is_capped() -> None:
    base = decide(SCHEDULE, attempts_made=1, status_code=429, now_ms=NOW, jitter_key="d")
    short = decide(SCHEDULE, attempts_made=1, status_code=429, now_ms=NOW, jitter_key="d", retry_after_s=0.5)
    longer = decide(SCHEDULE, attempts_made=1, status_code=429, now_ms=NOW, jitter_key="d", retry_after_s=120)
    huge = decide(SCHEDULE, attempts_made=1, status_code=503, now_ms=NOW, jitter_key="d", retry_after_s=10**9)
    assert short.next_attempt_at_ms == base.next_attempt_at_ms
    assert longer.next_attempt_at_ms == NOW + 120_000
    assert huge.next_attempt_at_ms == NOW + SCHEDULE.max_delay_s * 1000


def test_refused_destination_is_terminal() -> None:
    decision = decide(SCHEDULE, attempts_made=1, status_code=None, now_ms=NOW, jitter_key="d", unsafe=True)
    assert decision.state is DeliveryState.FAILED


def test_endpoint_is_disabled_only_after_days_of_failure() -> None:
    day = 86_400_000
    assert not failing_too_long(None, NOW)
    assert not failing_too_long(NOW - 4 * day, NOW)
    assert failing_too_long(NOW - 5 * day, NOW)
    assert failing_too_long(NOW - 2 * day, NOW, disable_after_ms=day)
