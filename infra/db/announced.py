"""Per-process caches that the database itself tells to forget (PostgreSQL).

What the hot path would otherwise read on every request (the API key behind a stamp, the key
``signWith`` names, the access controls of ``infra.access.changes``, migration
``0032_access_announced``) changes rarely. A statement-level trigger on each table such a cache
depends on (migration ``0021_hot_path``) sends ``NOTIFY walletd_rows_changed`` with the
table's name in the transaction of the change, delivered at commit, so no code path can
forget it. Every process's one ``LISTEN`` connection (``infra.db.listen``) hands it to the
caches that depend on that table, which forget everything.

On SQLite, which has no ``NOTIFY``, triggers count the writes to those tables in
``rows_changed`` (migration ``0029_rows_changed``) and :class:`CountedChanges` stands in for
the listener: before a cache answers it reads the counts (one indexed read of a few rows on a
connection of its own) and announces the tables whose count moved, so a change committed by
any process, this one or another on the same file, is seen by the next lookup.

A cache answers only while announcements can be relied on (the listener is connected); while
the listener (re)connects, and in the CLI, it is empty and every lookup reads. An entry is
stored only if no announcement arrived between the read it came from and the store (the
generation did not move), so a read that raced a change can never be remembered after the
change was announced.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Hashable
from typing import Final, Generic, Protocol, TypeVar

from infra.db.listen import Subscription

#: The channel the ``0021_hot_path`` triggers announce on (payload: the table name).
CHANNEL: Final = "walletd_rows_changed"
#: The channel the ``0009_webhook_notify`` trigger announces endpoint changes on (payload:
#: the organization id).
ENDPOINTS_CHANNEL: Final = "walletd_endpoints_changed"


class Announcer(Protocol):
    """Where announcements come from: ``infra.db.listen.Listener`` (PostgreSQL) or
    :class:`CountedChanges` (SQLite)."""

    connected: threading.Event

    @property
    def stopped(self) -> bool: ...

    def subscribe(self, channel: str, on_notify: Callable[[str], None],
                  on_reset: Callable[[], None]) -> None: ...

    def refresh(self) -> None:
        """Deliver what changed up to now (a pushed source has nothing to do)."""


class CountedChanges:
    """SQLite's announcements: the ``rows_changed`` counts, read when a cache is about to
    answer (:meth:`refresh`); each table whose count moved is announced on :data:`CHANNEL`
    (and endpoint changes on :data:`ENDPOINTS_CHANNEL`), as PostgreSQL's triggers would."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._seen: dict[str, int] = {}
        self._subscriptions: tuple[Subscription, ...] = ()
        self._stopped = False
        #: Always set: counts are read, not pushed, so none can be missed.
        self.connected = threading.Event()
        self.connected.set()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def subscribe(self, channel: str, on_notify: Callable[[str], None],
                  on_reset: Callable[[], None]) -> None:
        self._subscriptions = (*self._subscriptions, Subscription(channel, on_notify, on_reset))

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self.connected.clear()
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def refresh(self) -> None:
        # Read and deliver under one lock: a thread that finds nothing moved must not answer
        # from a cache another thread has seen a change for and not yet told.
        with self._lock:
            if self._stopped:
                return
            try:
                if self._connection is None:
                    self._connection = sqlite3.connect(self._path, timeout=30,
                                                       check_same_thread=False,
                                                       isolation_level=None)
                counts = dict(self._connection.execute(
                    "SELECT name, generation FROM rows_changed").fetchall())
            except sqlite3.Error:
                # Unreadable counts (a database not migrated yet): trust nothing remembered.
                for subscription in self._subscriptions:
                    subscription.on_reset()
                return
            moved = [name for name, count in counts.items() if self._seen.get(name) != count]
            self._seen = counts
            for name in moved:
                for subscription in self._subscriptions:
                    if subscription.channel == CHANNEL:
                        subscription.on_notify(name)
                    elif subscription.channel == ENDPOINTS_CHANNEL and name == "webhook_endpoints":
                        subscription.on_notify("")


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class AnnouncedCache(Generic[K, V]):
    """A bounded map forgotten whenever one of ``tables`` is announced changed."""

    def __init__(self, name: str, tables: tuple[str, ...], max_entries: int = 10_000) -> None:
        self.name = name
        self.tables = frozenset(tables)
        self._max = max_entries
        self._lock = threading.Lock()
        self._data: dict[K, V] = {}
        self._generation = 0
        self._listeners: list[Announcer] = []

    def attach(self, listener: Announcer | None) -> None:
        """Follow ``listener``'s announcements (no-op without one: the cache stays empty)."""
        if listener is None or any(known is listener for known in self._listeners):
            return
        self._listeners.append(listener)
        listener.subscribe(CHANNEL, self._announced, self.clear)

    def detach(self, listener: Announcer) -> None:
        """Stop following ``listener`` (stopped); forget everything."""
        self._listeners = [known for known in self._listeners if known is not listener]
        self.clear()

    @property
    def live(self) -> bool:
        """Whether changes are being announced to this cache right now (by every listener
        attached and not stopped; a stopped one is a process's services shut down)."""
        running = [known for known in self._listeners if not known.stopped]
        return bool(running) and all(known.connected.is_set() for known in running)

    def get(self, key: K) -> V | None:
        """The remembered value, or ``None`` (also whenever announcements are not live)."""
        if not self._listeners:
            return None
        self._refresh()
        if not self._data:
            return None
        found = self._data.get(key)
        return found if found is not None and self.live else None

    def token(self) -> int | None:
        """Take before reading what :meth:`put` will store; ``None`` when not live."""
        self._refresh()
        return self._generation if self.live else None

    def _refresh(self) -> None:
        for known in self._listeners:
            known.refresh()

    def put(self, key: K, value: V, token: int | None) -> None:
        """Remember ``value`` if nothing was announced since ``token`` was taken."""
        if token is None:
            return
        with self._lock:
            if token != self._generation or not self.live:
                return
            if len(self._data) >= self._max:
                self._data.clear()
            self._data[key] = value

    def clear(self) -> None:
        """Forget everything (an announcement, or the listener connected/lost)."""
        with self._lock:
            self._generation += 1
            self._data.clear()

    def _announced(self, table: str) -> None:
        if table in self.tables:
            self.clear()
