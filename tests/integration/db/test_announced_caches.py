"""Per-process caches forgotten on the database's own announcements (real PostgreSQL).

Migration ``0021_hot_path`` puts a statement trigger on each table the hot path's caches read;
a committed write to one of them reaches every ``LISTEN`` connection, and the caches that
depend on that table forget everything (``infra.db.announced``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from infra.db.announced import AnnouncedCache
from infra.db.listen import Listener
from infra.db.migrate import upgrade


@pytest.fixture
def listener(fresh_pg_url: str) -> Iterator[tuple[Listener, str]]:
    upgrade(fresh_pg_url)
    dsn = fresh_pg_url.replace("postgresql+psycopg://", "postgresql://")
    found = Listener(dsn)
    yield found, dsn
    found.stop()


def _until(condition: object, seconds: float = 20.0) -> bool:
    """Poll ``condition()`` (bounded): notifications arrive on the listener's thread."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def _commit(dsn: str, sql: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)


def test_a_write_to_a_table_forgets_the_caches_that_read_it_and_only_those(
        listener: tuple[Listener, str]) -> None:
    found, dsn = listener
    keys: AnnouncedCache[str, str] = AnnouncedCache("keys", ("api_keys",))
    signers: AnnouncedCache[str, str] = AnnouncedCache("signers", ("wallet_accounts",))
    keys.attach(found)
    signers.attach(found)
    assert _until(lambda: keys.live and signers.live)
    keys.put("k", "key", keys.token())
    signers.put("s", "signer", signers.token())
    assert keys.get("k") == "key" and signers.get("s") == "signer"

    stale = keys.token()
    # A statement trigger fires even when the statement touches no row.
    _commit(dsn, "DELETE FROM api_keys WHERE false")
    assert _until(lambda: keys.get("k") is None)
    # The other table's cache heard the same delivery and kept its entry.
    assert signers.get("s") == "signer"
    # A read that began before the announcement is never remembered after it.
    keys.put("k", "stale", stale)
    assert keys.get("k") is None
    keys.put("k", "fresh", keys.token())
    assert keys.get("k") == "fresh"

    _commit(dsn, "UPDATE wallet_accounts SET name = name WHERE false")
    assert _until(lambda: signers.get("s") is None)


def test_a_rolled_back_write_announces_nothing_and_a_lost_connection_empties_the_cache(
        listener: tuple[Listener, str]) -> None:
    found, dsn = listener
    keys: AnnouncedCache[str, str] = AnnouncedCache("keys", ("api_keys",))
    keys.attach(found)
    assert _until(lambda: keys.live)
    keys.put("k", "key", keys.token())
    with psycopg.connect(dsn) as conn:
        conn.execute("DELETE FROM api_keys WHERE false")
        conn.rollback()
    # Followed by a committed write to another table: once that arrived, the rolled-back
    # one would have arrived before it.
    marker: AnnouncedCache[str, str] = AnnouncedCache("marker", ("private_keys",))
    marker.attach(found)
    assert _until(lambda: marker.live)
    keys.put("k", "key", keys.token())   # the new subscription reconnected: empty again
    marker.put("m", "m", marker.token())
    _commit(dsn, "DELETE FROM private_keys WHERE false")
    assert _until(lambda: marker.get("m") is None)
    assert keys.get("k") == "key"

    keys.detach(found)
    assert keys.get("k") is None and not keys.live
    keys.put("k", "key", keys.token())   # not live: never stored
    assert keys.get("k") is None


def test_without_a_listener_nothing_is_remembered() -> None:
    cache: AnnouncedCache[str, str] = AnnouncedCache("sqlite", ("api_keys",))
    cache.attach(None)
    cache.put("k", "v", cache.token())
    assert cache.token() is None and cache.get("k") is None
