"""Waiting for an activity to settle, for the optimistically synchronous submit.

Waiting requests are woken, not polling:

* in the process that settled the activity (the embedded default: ingress and pools share
  one process), by :data:`infra.pipeline.lifecycle.ON_SETTLED` right after the commit;
* on PostgreSQL, across processes, by ``NOTIFY walletd_activity_settled`` (sent by a
  trigger in the transaction of the change, delivered on commit): one listener thread per
  process wakes the waiting request threads.

A woken request reads the activity once. While notifications cannot be relied on (the
PostgreSQL listener is connecting or reconnecting), and for a plain :class:`Waiter`, the
status is re-read on a short, growing interval; while they can, only on a slow safety-net
interval (a settle by another process on the same SQLite file, a lost notification).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from infra.db.listen import Listener
from infra.db.models.activities import Activity
from infra.pipeline import lifecycle

log = logging.getLogger(__name__)

CHANNEL: Final = lifecycle.SETTLED_CHANNEL


class Waiter:
    """Re-reads the status with backoff (no notification source)."""

    #: While notified, how often a waiting request re-reads anyway (covers a lost NOTIFY).
    _safety_interval = 0.25

    def __init__(self, session_factory: sessionmaker[Session], max_interval: float = 0.02) -> None:
        self._factory = session_factory
        self._max_interval = max_interval

    def status(self, activity_id: str) -> str:
        with self._factory() as session:
            return session.scalar(select(Activity.status).where(Activity.id == activity_id)) or ""

    def wait(self, activity_id: str, timeout_s: float) -> str:
        """Return the status once settled or when ``timeout_s`` has passed."""
        deadline = time.monotonic() + timeout_s
        with self.watch() as watch:
            watch.follow(activity_id)
            while True:
                status = self.status(activity_id)
                remaining = deadline - time.monotonic()
                if status in lifecycle.SETTLED or remaining <= 0:
                    return status
                watch.wait(remaining, known_unsettled=True)

    def watch(self) -> Watch:
        """A subscription to one activity's settling, opened before it can settle."""
        return Watch(self)

    def _notified(self) -> bool:
        """Whether settling is announced to waiting requests (no need to poll quickly)."""
        return False

    def stop(self) -> None:
        """Release what the waiter holds (nothing, for one that polls)."""

    def take_answer(self, activity_id: str) -> str | None:
        """The settled activity's rendering (its JSON text) if it arrived with its
        announcement (once)."""
        return None

    def _add(self, activity_id: str, event: threading.Event) -> None:
        """Wake ``event`` when ``activity_id`` settles (no-op without notifications)."""

    def _remove(self, activity_id: str, event: threading.Event) -> None:
        """Stop waking ``event`` for ``activity_id``."""


class Watch:
    """One request's subscription: :meth:`follow` an id, then :meth:`wait` for it to settle.

    Following the id *before* the message that starts its work is published means no
    notification can be missed, so a fresh activity needs no status read before waiting.
    """

    def __init__(self, waiter: Waiter) -> None:
        self._waiter = waiter
        self._event = threading.Event()
        self.activity_id: str | None = None

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.activity_id is not None:
            self._waiter._remove(self.activity_id, self._event)
            self.activity_id = None

    def follow(self, activity_id: str) -> None:
        """Start listening for ``activity_id`` (replacing any earlier id)."""
        if self.activity_id is not None:
            self._waiter._remove(self.activity_id, self._event)
        self.activity_id = activity_id
        self._event.clear()
        self._waiter._add(activity_id, self._event)

    def wait(self, timeout_s: float, *, known_unsettled: bool) -> bool:
        """Block until the followed activity settled or ``timeout_s`` passed.

        Returns whether it was seen or announced settled; announced means "read it now": a
        caller that then finds it unsettled (a wake-up after the listener reconnected) may
        wait again. ``known_unsettled`` skips the first status read (the caller just stored
        the activity and has not yet published its work).
        """
        assert self.activity_id is not None
        deadline = time.monotonic() + timeout_s
        delay = 0.001
        check = not known_unsettled
        while True:
            if check and self._waiter.status(self.activity_id) in lifecycle.SETTLED:
                return True
            check = True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self._waiter._notified():
                if self._event.wait(min(self._waiter._safety_interval, remaining)):
                    self._event.clear()
                    return True
            else:
                self._event.wait(min(delay, remaining))
                self._event.clear()
                delay = min(delay * 2, self._waiter._max_interval)


class NotifiedWaiter(Waiter):
    """Wakes the requests waiting on an activity when this process settles it."""

    _safety_interval = 1.0

    def __init__(self, session_factory: sessionmaker[Session], max_interval: float = 0.02,
                 settlements: lifecycle.Settlements | None = None) -> None:
        super().__init__(session_factory, max_interval=max_interval)
        self._lock = threading.Lock()
        self._events: dict[str, set[threading.Event]] = {}
        #: Renderings that arrived for followed activities (``lifecycle.ANSWER_CHANNEL``).
        self._answers: dict[str, str] = {}
        self._settlements = settlements
        if settlements is not None:
            settlements.subscribe_answers(self._answer)
            settlements.subscribe(self._wake)

    def _notified(self) -> bool:
        return True

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
                    self._answers.pop(activity_id, None)

    def take_answer(self, activity_id: str) -> str | None:
        with self._lock:
            text = self._answers.pop(activity_id, None)
        # The rendering names its activity first (``infra.views.activities``); one that does
        # not is not this activity's and is ignored (the caller reads the activity instead).
        if text is None or not text.startswith(f'{{"id":{json.dumps(activity_id)},'):
            return None
        return text

    def _answer(self, payload: str) -> None:
        """An activity settled with its rendering: keep it if someone here follows it."""
        activity_id, _, text = payload.partition(" ")
        with self._lock:
            if activity_id not in self._events:
                return
            self._answers[activity_id] = text
        self._wake([activity_id])

    def _wake(self, activity_ids: list[str]) -> None:
        with self._lock:
            events = [e for i in activity_ids for e in self._events.get(i, ())]
        for event in events:
            event.set()

    def stop(self) -> None:
        """Stop being woken by this process's settles."""
        if self._settlements is not None:
            self._settlements.unsubscribe(self._wake)
            self._settlements.unsubscribe_answers(self._answer)


class PostgresWaiter(NotifiedWaiter):
    """Also wakes from ``LISTEN walletd_activity_settled``; polls while that is not up."""

    _safety_interval = 0.25

    def __init__(self, session_factory: sessionmaker[Session], listener: Listener,
                 settlements: lifecycle.Settlements | None = None) -> None:
        super().__init__(session_factory, max_interval=0.05, settlements=settlements)
        self._listener = listener
        listener.subscribe(CHANNEL, lambda id_: self._wake([id_]), self._wake_all)
        listener.subscribe(lifecycle.ANSWER_CHANNEL, self._answer, lambda: None)

    def _notified(self) -> bool:
        return self._listener.connected.is_set()

    def _wake_all(self) -> None:
        # Connected or lost: requests that began waiting before LISTEN took effect, or
        # that will not be told any more, read their activity now.
        with self._lock:
            events = [e for group in self._events.values() for e in group]
        for event in events:
            event.set()


def make_waiter(session_factory: sessionmaker[Session], listener: Listener | None,
                settlements: lifecycle.Settlements | None = None) -> Waiter:
    """The best waiter: woken by PostgreSQL's notifications when there is a ``listener``,
    by this process's settles (``settlements``) in any case."""
    if listener is not None:
        return PostgresWaiter(session_factory, listener, settlements)
    return NotifiedWaiter(session_factory, settlements=settlements)


Notify = Callable[[Session, str], None]
