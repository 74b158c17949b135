"""What a process runs with: ``Services``, frozen, built only by ``infra.bootstrap``.

The ingress gets a plain :class:`Services`: its type has no field through which key material
could reach it. Worker-type roles (``worker``, ``embedded``, ``cli``) get
``infra.worker_services.WorkerServices``, which adds the keys.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import dramatiq
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from infra.auth.principal import Stamps
from infra.db.announced import Announcer, CountedChanges
from infra.db.engine import write_lock
from infra.db.listen import Listener
from infra.db.unit_of_work import ActivityListener, UnitOfWork
from infra.pipeline.lifecycle import Settlements
from infra.pipeline.wait import Waiter, make_waiter
from infra.settings import Role, Settings


class _Connections:
    """The ``LISTEN`` connection and the waiter, built on first use (one per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.listener: Listener | None = None
        self.counted: CountedChanges | None = None
        self.waiter: Waiter | None = None


@dataclass(frozen=True, kw_only=True)
class Services:
    """What one process runs with (built by ``infra.bootstrap.bootstrap``).

    Attributes:
        settings: The settings as this role sees them.
        role: ``ingress``, ``worker``, ``embedded`` or ``cli``.
        engine / session_factory: Database access (transactions: use ``uow()``).
        read_session_factory: Autocommit sessions for read-only work (queries, rendering).
        broker: The dramatiq broker.
        activity_listeners: The activity status listeners, in order (every ``uow()`` runs them).
        settlements: In-process announcement of settled activities (the waiter subscribes).
        stamps: The stamp headers this process accepts and where their credentials live.
    """

    settings: Settings
    role: Role
    engine: Engine
    session_factory: sessionmaker[Session]
    read_session_factory: sessionmaker[Session]
    broker: dramatiq.Broker
    activity_listeners: tuple[ActivityListener, ...]
    settlements: Settlements
    stamps: Stamps
    _connections: _Connections = field(default_factory=_Connections, repr=False, compare=False)

    @property
    def listener(self) -> Listener | None:
        """The process's ``LISTEN`` connection (PostgreSQL only), built on first use."""
        with self._connections.lock:
            if self._connections.listener is None and self.engine.dialect.name == "postgresql":
                url = self.engine.url.set(drivername="postgresql")
                self._connections.listener = Listener(url.render_as_string(hide_password=False))
            return self._connections.listener

    @property
    def announcer(self) -> Announcer | None:
        """Where this process hears of changes to what it remembers (``infra.db.announced``):
        the ``LISTEN`` connection on PostgreSQL, the counted changes of a SQLite file;
        ``None`` for an in-memory database."""
        listener = self.listener
        if listener is not None:
            return listener
        database = self.engine.url.database
        if self.engine.dialect.name != "sqlite" or not database or database == ":memory:":
            return None
        with self._connections.lock:
            if self._connections.counted is None:
                self._connections.counted = CountedChanges(database)
            return self._connections.counted

    @property
    def waiter(self) -> Waiter:
        """Waits for activities to settle (woken, not polling), built on first use."""
        listener = self.listener
        with self._connections.lock:
            if self._connections.waiter is None:
                self._connections.waiter = make_waiter(self.read_session_factory, listener,
                                                       self.settlements)
            return self._connections.waiter

    def stop_listening(self) -> None:
        """End the waiter and the ``LISTEN`` thread (tests, shutdown)."""
        if self._connections.waiter is not None:
            self._connections.waiter.stop()
        if self._connections.listener is not None:
            self._connections.listener.stop()
        if self._connections.counted is not None:
            self._connections.counted.stop()

    def uow(self) -> UnitOfWork:
        """A new unit of work running this process's activity listeners (queued behind this
        process's other writers on SQLite)."""
        return UnitOfWork(self.session_factory, write_lock(self.engine),
                          listeners=self.activity_listeners)
