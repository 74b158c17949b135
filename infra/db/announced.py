"""Per-process caches that the database itself tells to forget (PostgreSQL).

What the hot path would otherwise read on every request (the API key behind a stamp, the key
``signWith`` names) changes rarely. A statement-level trigger on each table such a cache
depends on (migration ``0021_hot_path``) sends ``NOTIFY walletd_rows_changed`` with the
table's name in the transaction of the change, delivered at commit, so no code path can
forget it. Every process's one ``LISTEN`` connection (``infra.db.listen``) hands it to the
caches that depend on that table, which forget everything.

A cache answers only while notifications can be relied on (the listener is connected); on
SQLite, and while the listener (re)connects, it is empty and every lookup reads. An entry is
stored only if no announcement arrived between the read it came from and the store (the
generation did not move), so a read that raced a change can never be remembered after the
change was announced.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Final, Generic, TypeVar

from infra.db.listen import Listener

#: The channel the ``0021_hot_path`` triggers announce on (payload: the table name).
CHANNEL: Final = "walletd_rows_changed"

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
        self._listeners: list[Listener] = []

    def attach(self, listener: Listener | None) -> None:
        """Follow ``listener``'s announcements (no-op without one: the cache stays empty)."""
        if listener is None or any(known is listener for known in self._listeners):
            return
        self._listeners.append(listener)
        listener.subscribe(CHANNEL, self._announced, self.clear)

    def detach(self, listener: Listener) -> None:
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
        if not self._listeners or not self._data:
            return None
        found = self._data.get(key)
        return found if found is not None and self.live else None

    def token(self) -> int | None:
        """Take before reading what :meth:`put` will store; ``None`` when not live."""
        return self._generation if self.live else None

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
