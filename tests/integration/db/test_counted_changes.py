"""SQLite's stand-in for NOTIFY: triggers count writes, caches read the counts before answering.

Migration ``0029_rows_changed`` counts every write to the tables the per-process caches read
(``infra.db.announced.CountedChanges``); a write committed by any connection, another
process's included, is seen by the very next lookup, with no wait.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.db.announced import AnnouncedCache, CountedChanges
from infra.db.migrate import upgrade
from infra.webhooks.outbox import EndpointAbsence


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[tuple[CountedChanges, Path]]:
    path = tmp_path / "walletd.db"
    upgrade(f"sqlite:///{path}")
    found = CountedChanges(str(path))
    yield found, path
    found.stop()


def _insert(path: Path, table: str, *, commit: bool = True) -> None:
    """A row of ``table`` written by a connection of its own (another process, say): every
    NOT NULL column gets a placeholder (foreign keys are not enforced on this connection)."""
    with sqlite3.connect(path) as conn:
        columns = [(row[1], row[2].upper()) for row in conn.execute(f"PRAGMA table_info({table})")
                   if row[3] or row[5]]
        unique = uuid.uuid4().hex
        values = [1 if "INT" in kind or "BOOL" in kind else f"{name}-{unique}"
                  for name, kind in columns]
        conn.execute(f"INSERT INTO {table} ({', '.join(n for n, _ in columns)}) "
                     f"VALUES ({', '.join('?' for _ in columns)})", values)
        if not commit:
            conn.rollback()


def test_a_committed_write_forgets_the_caches_that_read_it_at_the_next_lookup(
        counted: tuple[CountedChanges, Path]) -> None:
    changes, path = counted
    keys: AnnouncedCache[str, str] = AnnouncedCache("keys", ("api_keys",))
    signers: AnnouncedCache[str, str] = AnnouncedCache("signers", ("wallet_accounts",))
    keys.attach(changes)
    signers.attach(changes)
    assert keys.live and signers.live
    keys.put("k", "key", keys.token())
    signers.put("s", "signer", signers.token())
    assert keys.get("k") == "key" and signers.get("s") == "signer"

    stale = keys.token()
    _insert(path, "api_keys")
    # No wait: the lookup itself reads the counts.
    assert keys.get("k") is None
    assert signers.get("s") == "signer"
    # A read that began before the write, stored after it, is forgotten before it is served.
    keys.put("k", "stale", stale)
    _insert(path, "api_keys")
    assert keys.get("k") is None
    keys.put("k", "fresh", keys.token())
    assert keys.get("k") == "fresh"

    _insert(path, "wallet_accounts")
    assert signers.get("s") is None and keys.get("k") == "fresh"


def test_a_rolled_back_write_counts_nothing(counted: tuple[CountedChanges, Path]) -> None:
    changes, path = counted
    keys: AnnouncedCache[str, str] = AnnouncedCache("keys", ("api_keys",))
    keys.attach(changes)
    keys.put("k", "key", keys.token())
    _insert(path, "api_keys", commit=False)
    assert keys.get("k") == "key"


def test_endpoint_absence_is_forgotten_when_an_endpoint_is_written(
        counted: tuple[CountedChanges, Path]) -> None:
    changes, path = counted
    absence = EndpointAbsence()
    absence.watch(changes)
    absence.note_absent("org", absence.generation())
    assert absence.known_absent("org")
    _insert(path, "api_keys")  # another table: still known
    assert absence.known_absent("org")
    _insert(path, "webhook_endpoints")
    assert not absence.known_absent("org")


def test_unreadable_counts_trust_nothing_and_a_stopped_source_is_not_live(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()  # no rows_changed table: not migrated
    changes = CountedChanges(str(path))
    keys: AnnouncedCache[str, str] = AnnouncedCache("keys", ("api_keys",))
    keys.attach(changes)
    keys.put("k", "key", keys.token())
    assert keys.get("k") is None
    changes.stop()
    assert not keys.live and keys.token() is None
