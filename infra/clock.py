"""Time and identifiers, in one place so tests can reason about them."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def now_ms() -> int:
    """Milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def new_id() -> str:
    """A new resource id (UUID v4 string, as Turnkey uses)."""
    return str(uuid.uuid4())


def as_utc(value: datetime) -> datetime:
    """Attach UTC to a naive datetime read back from SQLite."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def wire_timestamp(value: datetime) -> dict[str, str]:
    """The wire form ``{"seconds": "…", "nanos": "…"}`` (strings, as Turnkey sends)."""
    value = as_utc(value)
    seconds = int(value.timestamp())
    nanos = value.microsecond * 1000
    return {"seconds": str(seconds), "nanos": str(nanos)}
