"""Rate limiting with state every ingress process shares.

``limiter.hit(key, limit, window_s)`` counts one request against ``key`` and answers a
:class:`Admission`: allowed or not, and how long to wait before the next request would be.
At most ``limit`` requests pass in any ``window_s`` seconds, spread or at once.

The algorithm is GCRA (the generic cell rate algorithm): one number per key, the
"theoretical arrival time" (TAT) of the next request. Each allowed request pushes it
``window_s / limit`` further; a request is refused while the TAT would lie more than
``window_s`` ahead of now. That is a sliding window without a log of timestamps, and the
wait until the next request passes falls out of the same arithmetic (``Retry-After``).

Two backends, chosen by :func:`from_url` (``Settings.rate_limit_url``):

- ``redis://`` / ``rediss://`` — :class:`RedisLimiter`: one Lua script per hit, so the read,
  compare and write are atomic across every process sharing the Redis; the clock is Redis's
  own (``TIME``), so ingress hosts with skewed clocks still agree.
- ``memory://`` — :class:`MemoryLimiter`: a dict under a lock, for the embedded default
  (one process) and unit tests.

A limiter whose store cannot be reached lets the request through (and logs, at most once a
minute): rate limiting protects the service, it must not take the API down with Redis.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

#: Prefix of every Redis key the limiter writes.
KEY_PREFIX = "walletd:ratelimit:"

# Floating-point slack when comparing times (seconds): the ``limit``-th request of a burst
# must pass even if ``limit * (window / limit)`` rounds a hair above ``window``.
_EPSILON = 1e-9


@dataclass(frozen=True)
class Admission:
    """The outcome of one :meth:`Limiter.hit`.

    Attributes:
        allowed: Whether the request may proceed.
        retry_after_s: Seconds until a request on the same key would pass (0 when allowed).
        remaining: How many more requests would pass right now.
        limit: The limit the request was counted against.
    """

    allowed: bool
    retry_after_s: float
    remaining: int
    limit: int


class Limiter(Protocol):
    """What the ingress needs of a rate limiter."""

    def hit(self, key: str, limit: int, window_s: float) -> Admission:
        """Count one request against ``key``: at most ``limit`` per ``window_s`` seconds."""
        ...


def _check(limit: int, window_s: float) -> None:
    if limit < 1 or window_s <= 0:
        raise ValueError(f"rate limit needs limit >= 1 and window_s > 0, got {limit}/{window_s}")


def _gcra(tat: float | None, now: float, limit: int, window_s: float) -> tuple[Admission, float]:
    """One GCRA step: the decision and the key's new TAT (unchanged when refused)."""
    interval = window_s / limit
    start = now if tat is None or tat < now else tat
    new_tat = start + interval
    ahead = new_tat - now
    if ahead > window_s + _EPSILON:
        return Admission(False, ahead - window_s, 0, limit), start
    remaining = math.floor((window_s - ahead) / interval + _EPSILON)
    return Admission(True, 0.0, remaining, limit), new_tat


class MemoryLimiter:
    """In-process limiter (the embedded default; not shared between processes)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._tat: dict[str, float] = {}
        self._next_prune = 0.0

    def hit(self, key: str, limit: int, window_s: float) -> Admission:
        """Count one request against ``key``."""
        _check(limit, window_s)
        with self._lock:
            now = self._clock()
            self._prune(now)
            decision, tat = _gcra(self._tat.get(key), now, limit, window_s)
            self._tat[key] = tat
            return decision

    def _prune(self, now: float) -> None:
        """Forget keys whose TAT has passed (they are as good as new), once a minute."""
        if now < self._next_prune:
            return
        self._next_prune = now + 60.0
        for key in [k for k, tat in self._tat.items() if tat <= now]:
            del self._tat[key]


# KEYS[1]: the key; ARGV[1]: limit; ARGV[2]: window in microseconds.
# Returns {allowed (0|1), retry_after_us, remaining}. Times are integer microseconds from
# Redis's clock, so the arithmetic is exact and every process agrees on "now".
_GCRA_LUA = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = window / limit
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local ahead = new_tat - now
if ahead > window + 0.5 then
  return {0, math.ceil(ahead - window), 0}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil(ahead / 1000) + 1)
return {1, 0, math.floor((window - ahead) / interval + 0.000001)}
"""


class RedisLimiter:
    """Limiter over Redis: shared by every process that uses the same Redis database."""

    def __init__(self, url: str) -> None:
        import redis

        self._redis = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self._script = self._redis.register_script(_GCRA_LUA)
        self._last_warning = 0.0

    def hit(self, key: str, limit: int, window_s: float) -> Admission:
        """Count one request against ``key`` (atomically, in Redis)."""
        import redis

        _check(limit, window_s)
        try:
            allowed, retry_us, remaining = self._script(
                keys=[KEY_PREFIX + key], args=[limit, round(window_s * 1_000_000)])
        except redis.RedisError as ex:
            self._warn(ex)
            return Admission(True, 0.0, limit, limit)
        return Admission(bool(allowed), int(retry_us) / 1_000_000, int(remaining), limit)

    def _warn(self, ex: Exception) -> None:
        now = time.monotonic()
        if now - self._last_warning >= 60.0:
            self._last_warning = now
            log.warning("rate limiter store unreachable, letting requests through: %s",
                        type(ex).__name__)


def from_url(url: str) -> Limiter:
    """The limiter for ``url``: ``redis://…``/``rediss://…`` or ``memory://``."""
    if url.startswith(("redis://", "rediss://")):
        return RedisLimiter(url)
    if url in ("memory://", ""):
        return MemoryLimiter()
    raise ValueError(f"unsupported WALLETD_RATE_LIMIT_URL {url!r} (redis:// or memory://)")
