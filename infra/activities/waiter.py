"""Waiting for an activity to settle, for the optimistically synchronous submit.

On PostgreSQL, :func:`infra.activities.lifecycle.transition` sends ``NOTIFY`` with the
activity id in the same transaction as a settling status change (delivered on commit); one
listener thread per ingress process wakes the waiting request threads. Elsewhere (SQLite),
and as a safety net on PostgreSQL, the waiter re-reads the status on a short interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from infra.activities import lifecycle
from infra.db.models.activities import Activity

log = logging.getLogger(__name__)

CHANNEL: Final = lifecycle.SETTLED_CHANNEL


class Waiter:
    """Re-reads the status with backoff (no notification source)."""

    def __init__(self, session_factory: sessionmaker[Session], max_interval: float = 0.02) -> None:
        self._factory = session_factory
        self._max_interval = max_interval

    def status(self, activity_id: str) -> str:
        with self._factory() as session:
            return session.scalar(select(Activity.status).where(Activity.id == activity_id)) or ""

    def wait(self, activity_id: str, timeout_s: float) -> str:
        """Return the status once settled or when ``timeout_s`` has passed."""
        deadline = time.monotonic() + timeout_s
        delay = 0.001
        with self._subscription(activity_id) as event:
            while True:
                status = self.status(activity_id)
                remaining = deadline - time.monotonic()
                if status in lifecycle.SETTLED or remaining <= 0:
                    return status
                event.wait(min(delay, remaining))
                event.clear()
                delay = min(delay * 2, self._max_interval)

    def _subscription(self, activity_id: str) -> _Subscription:
        return _Subscription(None, activity_id)


class _Subscription:
    def __init__(self, owner: PostgresWaiter | None, activity_id: str) -> None:
        self.owner, self.activity_id, self.event = owner, activity_id, threading.Event()

    def __enter__(self) -> threading.Event:
        if self.owner is not None:
            self.owner._add(self.activity_id, self.event)
        return self.event

    def __exit__(self, *exc: object) -> None:
        if self.owner is not None:
            self.owner._remove(self.activity_id, self.event)


class PostgresWaiter(Waiter):
    """Wakes waiters from ``LISTEN walletd_activity_settled``; polls slowly as a fallback."""

    def __init__(self, session_factory: sessionmaker[Session], dsn: str) -> None:
        super().__init__(session_factory, max_interval=0.05)
        self._dsn = dsn
        self._lock = threading.Lock()
        self._events: dict[str, set[threading.Event]] = {}
        self._thread: threading.Thread | None = None

    def _subscription(self, activity_id: str) -> _Subscription:
        self._ensure_listening()
        return _Subscription(self, activity_id)

    def _add(self, activity_id: str, event: threading.Event) -> None:
        with self._lock:
            self._events.setdefault(activity_id, set()).add(event)

    def _remove(self, activity_id: str, event: threading.Event) -> None:
        with self._lock:
            events = self._events.get(activity_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._events[activity_id]

    def _ensure_listening(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._listen, name="walletd-settled-listener",
                                                daemon=True)
                self._thread.start()

    def _listen(self) -> None:
        import psycopg

        while True:
            try:
                with psycopg.connect(self._dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    for note in conn.notifies():
                        with self._lock:
                            events = list(self._events.get(note.payload, ()))
                        for event in events:
                            event.set()
            except Exception:
                log.warning("settled-activity listener lost its connection; reconnecting")
                time.sleep(1)


def make_waiter(session_factory: sessionmaker[Session], url: str) -> Waiter:
    """The best waiter for the database at ``url``."""
    if url.startswith("postgresql"):
        dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
        return PostgresWaiter(session_factory, dsn)
    return Waiter(session_factory, max_interval=0.005)


Notify = Callable[[Session, str], None]
