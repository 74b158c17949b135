"""One ``LISTEN`` connection per process, shared by everything that waits on PostgreSQL.

Subscribers name a channel and get ``on_notify(payload)`` for each notification, and
``on_reset()`` whenever the connection comes up or goes down: notifications may have been
missed then, so a subscriber re-reads what it relies on (waiting requests read their
activity, caches forget). :attr:`Listener.connected` tells whether notifications can be
relied on right now. The thread starts with the first subscription and reconnects by
itself; :meth:`Listener.stop` ends it.

Channels (each announced by a trigger, in the transaction of the change, so no code path
can forget it):

* ``walletd_activity_settled`` (payload: activity id): ``infra.pipeline.wait``;
* ``walletd_endpoints_changed`` (payload: organization id): ``infra.webhooks.outbox``;
* ``walletd_deliveries_due`` (no payload): the notifier's relay.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: While the database stays unreachable, the listener says so at most once per this long.
QUIET_S = 60.0


@dataclass(frozen=True)
class Subscription:
    channel: str
    on_notify: Callable[[str], None]
    on_reset: Callable[[], None]


class Listener:
    """The process's ``LISTEN`` connection to the database at ``dsn``."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._lock = threading.Lock()
        self._subscriptions: list[Subscription] = []
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._restart = threading.Event()
        #: The channels the current connection listens on; ``None`` while there is none (the
        #: next one listens on every subscription's channel).
        self._listened: frozenset[str] | None = None
        #: Set while notifications arrive; cleared while (re)connecting.
        self.connected = threading.Event()

    def subscribe(self, channel: str, on_notify: Callable[[str], None],
                  on_reset: Callable[[], None]) -> None:
        """Start delivering ``channel``'s notifications (and resets) to the callbacks."""
        with self._lock:
            self._subscriptions.append(Subscription(channel, on_notify, on_reset))
            running = self._thread is not None and self._thread.is_alive()
            if not running:
                self._thread = threading.Thread(target=self._run, name="walletd-listener",
                                                daemon=True)
                self._thread.start()
            # A connection already up does not listen on a new channel; one still to come
            # will (it reads the subscriptions under this lock).
            unheard = running and self._listened is not None and channel not in self._listened
        if unheard:
            # LISTEN on the new channel too: reconnect once, not trusted until then.
            self.connected.clear()
            self._restart.set()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (it will never deliver again)."""
        return self._stopping.is_set()

    def refresh(self) -> None:
        """Nothing to do: notifications are pushed as they come (``infra.db.announced``)."""

    def stop(self) -> None:
        """End the thread within about a second."""
        self._stopping.set()
        thread = self._thread
        if thread is not None:
            thread.join(5)

    def _run(self) -> None:
        import psycopg

        failures, last_said = 0, 0.0
        while not self._stopping.is_set():
            self._restart.clear()
            try:
                with psycopg.connect(self._dsn, autocommit=True) as conn:
                    with self._lock:
                        channels = sorted({s.channel for s in self._subscriptions})
                        self._listened = frozenset(channels)
                    for channel in channels:
                        conn.execute(f"LISTEN {channel}")
                    self.connected.set()
                    if failures:
                        log.warning("database listener reconnected after %d failed attempts",
                                    failures)
                    failures = 0
                    self._reset()  # anything announced before LISTEN took effect
                    while not (self._stopping.is_set() or self._restart.is_set()):
                        for note in conn.notifies(timeout=0.2):
                            self._deliver(note.channel, note.payload)
            except Exception as ex:
                failures += 1
                # The first failure with its traceback; while the database stays away, one
                # line a minute (it retries every second).
                if failures == 1:
                    log.warning("database listener lost its connection; reconnecting",
                                exc_info=True)
                    last_said = time.monotonic()
                elif time.monotonic() - last_said >= QUIET_S:
                    log.warning("database listener still cannot connect (%d attempts): %s",
                                failures, str(ex).strip().splitlines()[0] if str(ex) else
                                type(ex).__name__)
                    last_said = time.monotonic()
            with self._lock:
                self._listened = None
            self.connected.clear()
            self._reset()
            if not self._restart.is_set():
                self._stopping.wait(1)

    def _deliver(self, channel: str, payload: str) -> None:
        with self._lock:
            targets = [s.on_notify for s in self._subscriptions if s.channel == channel]
        for target in targets:
            try:
                target(payload)
            except Exception:
                log.exception("a %s subscriber failed", channel)

    def _reset(self) -> None:
        with self._lock:
            targets = [s.on_reset for s in self._subscriptions]
        for target in targets:
            try:
                target()
            except Exception:
                log.exception("a listener subscriber failed to reset")
