"""When a webhook delivery is tried again, and when it stops.

Classification (PROTOCOL.md §9, ANCHORS.md §C): 2xx is success; no response (network error,
timeout), 408, 429 and 5xx are retried; every other status (1xx, 3xx, other 4xx) is terminal.
Redirects are never followed, so a 3xx is the endpoint's answer.

The schedule is exponential with jitter and spans more than a day even with the most negative
jitter. The jitter of attempt *n* is derived from a key (the delivery id) rather than a random
generator, so the next attempt time can be recomputed after a crash and is the same value the
caller persisted on the delivery row. ``Retry-After`` may stretch one delay, never shorten it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

DAY_S = 86_400.0
#: An endpoint failing without a single success for this long is disabled (Svix: 5 days).
DEFAULT_DISABLE_AFTER_MS = 5 * 86_400_000


class AttemptClass(StrEnum):
    """What one attempt's answer means."""

    SUCCESS = "success"
    RETRYABLE = "retryable"
    TERMINAL = "terminal"


class DeliveryState(StrEnum):
    """The persisted state of a delivery row."""

    PENDING = "PENDING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


def classify(status_code: int | None) -> AttemptClass:
    """Classify an HTTP status; ``None`` means no response (network error or timeout)."""
    if status_code is None:
        return AttemptClass.RETRYABLE
    if 200 <= status_code < 300:
        return AttemptClass.SUCCESS
    if status_code in (408, 429) or 500 <= status_code < 600:
        return AttemptClass.RETRYABLE
    return AttemptClass.TERMINAL


def _unit_jitter(key: str, attempt: int) -> float:
    """A value in [-1, 1) fixed by ``key`` and ``attempt``."""
    digest = hashlib.sha256(f"{key}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**63 - 1.0


@dataclass(frozen=True)
class RetrySchedule:
    """Exponential backoff with bounded jitter.

    With the defaults the nominal delays are 5 s, 20 s, 80 s, 5.3 min, 21 min, 1.4 h, 5.7 h,
    then 10 h three times: 11 attempts over about 37.6 h (at least 30 h with jitter).

    Attributes:
        first_delay_s: Delay before the second attempt.
        factor: Growth per attempt.
        max_delay_s: Cap on one delay.
        max_attempts: Attempts in total, the first included.
        jitter: Each delay is scaled by a factor in ``[1 - jitter, 1 + jitter)``.
        min_span_s: The schedule is rejected unless its shortest possible span reaches this.
    """

    first_delay_s: float = 5.0
    factor: float = 4.0
    max_delay_s: float = 36_000.0
    max_attempts: int = 11
    jitter: float = 0.2
    min_span_s: float = DAY_S

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.first_delay_s <= 0 or self.factor < 1:
            raise ValueError("a retry schedule needs attempts, a positive delay and factor >= 1")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter is a fraction in [0, 1)")
        if self.shortest_span_s() < self.min_span_s:
            raise ValueError("the retry schedule must span at least min_span_s")

    def nominal_delay_s(self, attempts_made: int) -> float:
        """The un-jittered delay after ``attempts_made`` (>= 1) attempts."""
        exponent = attempts_made - 1
        delay = self.first_delay_s * self.factor**exponent
        return min(delay, self.max_delay_s)

    def shortest_span_s(self) -> float:
        """The span from first to last attempt when every jitter is most negative."""
        total = sum(self.nominal_delay_s(n) for n in range(1, self.max_attempts))
        return total * (1 - self.jitter)

    def delay_s(self, attempts_made: int, *, jitter_key: str) -> float | None:
        """Seconds until the next attempt, or ``None`` when attempts are exhausted."""
        if attempts_made < 1:
            raise ValueError("at least one attempt has been made")
        if attempts_made >= self.max_attempts:
            return None
        scale = 1 + self.jitter * _unit_jitter(jitter_key, attempts_made)
        return self.nominal_delay_s(attempts_made) * scale


@dataclass(frozen=True)
class DeliveryUpdate:
    """What to persist after an attempt.

    Attributes:
        state: The delivery's new state.
        next_attempt_at_ms: When to try again (only for ``PENDING``).
        reason: Short human-readable explanation for attempt logs.
    """

    state: DeliveryState
    next_attempt_at_ms: int | None
    reason: str


def decide(
    schedule: RetrySchedule,
    *,
    attempts_made: int,
    status_code: int | None,
    now_ms: int,
    jitter_key: str,
    retry_after_s: float | None = None,
    unsafe: bool = False,
) -> DeliveryUpdate:
    """Turn the latest attempt's answer into the delivery's next state.

    Args:
        schedule: The retry schedule.
        attempts_made: Attempts including the one just made.
        status_code: Its HTTP status, ``None`` if there was no response.
        now_ms: Current time (Unix ms).
        jitter_key: Usually the delivery id.
        retry_after_s: A ``Retry-After`` the endpoint sent; lengthens the delay up to the cap.
        unsafe: The destination was refused before sending (terminal).
    """
    if unsafe:
        return DeliveryUpdate(DeliveryState.FAILED, None, "destination refused")
    verdict = classify(status_code)
    if verdict is AttemptClass.SUCCESS:
        return DeliveryUpdate(DeliveryState.SUCCEEDED, None, f"HTTP {status_code}")
    if verdict is AttemptClass.TERMINAL:
        return DeliveryUpdate(DeliveryState.FAILED, None, f"terminal HTTP {status_code}")
    delay = schedule.delay_s(attempts_made, jitter_key=jitter_key)
    what = "no response" if status_code is None else f"HTTP {status_code}"
    if delay is None:
        return DeliveryUpdate(DeliveryState.FAILED, None, f"{what}; retries exhausted")
    if retry_after_s is not None and retry_after_s > delay:
        delay = min(retry_after_s, schedule.max_delay_s)
    return DeliveryUpdate(DeliveryState.PENDING, now_ms + round(delay * 1000), f"{what}; will retry")


def failing_too_long(
    failing_since_ms: int | None,
    now_ms: int,
    *,
    disable_after_ms: int = DEFAULT_DISABLE_AFTER_MS,
) -> bool:
    """Whether an endpoint that has failed without success since ``failing_since_ms`` is due
    to be disabled."""
    return failing_since_ms is not None and now_ms - failing_since_ms >= disable_after_ms
