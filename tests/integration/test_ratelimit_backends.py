"""The rate limiter on both backends: in process and over a real Redis."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from infra.ratelimit import Limiter, MemoryLimiter, RedisLimiter


@pytest.fixture(params=["memory", "redis"])
def limiter(request: pytest.FixtureRequest) -> Limiter:
    if request.param == "memory":
        return MemoryLimiter()
    return RedisLimiter(request.getfixturevalue("redis_url"))


def key() -> str:
    return f"test:{uuid.uuid4().hex}"


def test_limit_per_window_then_retry_after(limiter: Limiter) -> None:
    k = key()
    got = [limiter.hit(k, 3, 60.0) for _ in range(4)]
    assert [d.allowed for d in got] == [True, True, True, False]
    assert [d.remaining for d in got] == [2, 1, 0, 0]
    # The next request passes once one request's share of the window (60 s / 3) has passed.
    assert 0 < got[3].retry_after_s <= 20.0
    assert all(d.retry_after_s == 0 for d in got[:3])
    assert limiter.hit(key(), 3, 60.0).allowed  # another key is untouched


def test_concurrent_hits_never_exceed_the_limit(limiter: Limiter) -> None:
    k = key()
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limiter.hit(k, 10, 60.0), range(40)))
    assert sum(d.allowed for d in decisions) == 10


def test_redis_state_is_shared_between_processes_clients(redis_url: str) -> None:
    first, second = RedisLimiter(redis_url), RedisLimiter(redis_url)
    k = key()
    assert first.hit(k, 2, 60.0).allowed
    assert second.hit(k, 2, 60.0).allowed
    assert not first.hit(k, 2, 60.0).allowed
    assert not second.hit(k, 2, 60.0).allowed


def test_redis_keys_expire_with_their_window(redis_url: str) -> None:
    import redis

    limiter = RedisLimiter(redis_url)
    k = key()
    limiter.hit(k, 5, 30.0)
    ttl_ms = redis.Redis.from_url(redis_url).pttl("walletd:ratelimit:" + k)
    assert 0 < ttl_ms <= 30_000 / 5 + 1


def test_unreachable_redis_lets_requests_through() -> None:
    limiter = RedisLimiter("redis://127.0.0.1:1/0")
    assert all(limiter.hit(key(), 1, 60.0).allowed for _ in range(3))
