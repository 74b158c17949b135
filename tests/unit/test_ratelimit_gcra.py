"""The GCRA arithmetic of the in-process limiter, on a clock the test moves."""

from __future__ import annotations

import pytest

from infra.ratelimit import MemoryLimiter, from_url
from infra.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_burst_of_limit_then_refused_with_exact_wait() -> None:
    clock = Clock()
    limiter = MemoryLimiter(clock)
    got = [limiter.hit("k", 4, 2.0) for _ in range(5)]
    assert [d.allowed for d in got] == [True, True, True, True, False]
    assert [d.remaining for d in got[:4]] == [3, 2, 1, 0]
    # One request's worth of the window (2 s / 4) must pass before the next is allowed.
    assert got[4].retry_after_s == pytest.approx(0.5)
    clock.t += 0.49
    assert not limiter.hit("k", 4, 2.0).allowed
    clock.t += 0.02
    assert limiter.hit("k", 4, 2.0).allowed


def test_refusals_do_not_push_the_window() -> None:
    clock = Clock()
    limiter = MemoryLimiter(clock)
    assert limiter.hit("k", 1, 10.0).allowed
    for _ in range(50):
        assert not limiter.hit("k", 1, 10.0).allowed
    clock.t += 10.0
    assert limiter.hit("k", 1, 10.0).allowed


def test_keys_are_independent_and_forgotten_when_idle() -> None:
    clock = Clock()
    limiter = MemoryLimiter(clock)
    assert limiter.hit("a", 1, 1.0).allowed
    assert limiter.hit("b", 1, 1.0).allowed
    assert not limiter.hit("a", 1, 1.0).allowed
    clock.t += 120.0
    limiter.hit("c", 1, 1.0)
    assert set(limiter._tat) == {"c"}


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError):
        MemoryLimiter().hit("k", 0, 1.0)
    with pytest.raises(ValueError):
        MemoryLimiter().hit("k", 1, 0)


def test_backend_from_settings() -> None:
    assert Settings.from_env({}).effective_rate_limit_url == "memory://"
    assert Settings.from_env({"WALLETD_BROKER_URL": "redis://r:6379/2"}
                             ).effective_rate_limit_url == "redis://r:6379/2"
    assert Settings.from_env({"WALLETD_BROKER_URL": "amqp://x", "WALLETD_RATE_LIMIT_URL":
                              "redis://r/3"}).effective_rate_limit_url == "redis://r/3"
    assert Settings.from_env({"WALLETD_BROKER_URL": "amqp://x"}
                             ).effective_rate_limit_url == "memory://"
    assert isinstance(from_url("memory://"), MemoryLimiter)
    with pytest.raises(ValueError, match="WALLETD_RATE_LIMIT_URL"):
        from_url("postgresql://x")
