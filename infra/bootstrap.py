"""Composition root: ``bootstrap(settings, role)`` builds a process's services.

Nothing connects at import time. Only worker-type roles get key material (``keyring``);
the ingress role's settings carry no master-key location at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import dramatiq
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from infra import extensions
from infra.db.announced import AnnouncedCache
from infra.db.engine import make_engine, make_read_session_factory, make_session_factory, write_lock
from infra.db.listen import Listener
from infra.db.unit_of_work import UnitOfWork
from infra.messaging import queues
from infra.messaging.broker import build_broker
from infra.pipeline.wait import Waiter, make_waiter
from infra.settings import Role, Settings


@dataclass
class Services:
    """What one process runs with.

    Attributes:
        settings: The settings as this role sees them.
        role: ``ingress``, ``worker``, ``embedded`` or ``cli``.
        engine / session_factory: Database access (transactions: use ``uow()``).
        read_session_factory: Autocommit sessions for read-only work (queries, rendering).
        broker: The dramatiq broker.
        keyring: Master-key access for workers (``None`` in the ingress).
        extras: Per-concept services other modules attach (e.g. webhook signer keys).
    """

    settings: Settings
    role: Role
    engine: Engine
    session_factory: sessionmaker[Session]
    read_session_factory: sessionmaker[Session]
    broker: dramatiq.Broker
    keyring: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
    _waiter: Waiter | None = None
    _listener: Listener | None = None

    @property
    def listener(self) -> Listener | None:
        """The process's ``LISTEN`` connection (PostgreSQL only), built on first use."""
        if self._listener is None and self.engine.dialect.name == "postgresql":
            url = self.engine.url.set(drivername="postgresql")
            self._listener = Listener(url.render_as_string(hide_password=False))
        return self._listener

    @property
    def waiter(self) -> Waiter:
        """Waits for activities to settle (woken, not polling), built on first use."""
        if self._waiter is None:
            self._waiter = make_waiter(self.read_session_factory, self.listener)
        return self._waiter

    def stop_listening(self) -> None:
        """End the waiter and the ``LISTEN`` thread (tests, shutdown)."""
        if self._waiter is not None:
            self._waiter.stop()
        if self._listener is not None:
            for cache in _announced_caches():
                cache.detach(self._listener)
            self._listener.stop()

    def uow(self) -> UnitOfWork:
        """A new unit of work (queued behind this process's other writers on SQLite)."""
        return UnitOfWork(self.session_factory, write_lock(self.engine))


#: Hooks that finish building services for worker-type roles (e.g. loading the key ring).
#: Each is called as ``hook(services)``; registered by the modules that own the concept.
WORKER_HOOKS: list[Callable[[Services], None]] = []
#: Hooks called as ``hook(services)`` for every role (e.g. subscribing to notifications).
SERVICE_HOOKS: list[Callable[[Services], None]] = []


def bootstrap(settings: Settings, role: Role, *, broker: dramatiq.Broker | None = None,
              label: str = "", queue_names: Iterable[str] | None = None,
              threads: int | None = None) -> Services:
    """Build the services of a ``role`` process from ``settings``.

    ``label`` (e.g. the queues a worker consumes) is appended to the database
    application name so operators can tell processes apart. ``queue_names`` (default: every
    queue) and ``threads`` (default: each queue's setting) size the connection pool of a
    worker-type process: every queue has its own pool of threads.
    """
    extensions.load()
    settings = settings.for_role(role)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if role == "ingress":
        pool = max(5, settings.http_threads + 2)
    else:
        consumed = queues.ALL if queue_names is None else tuple(queue_names)
        pool = max(5, sum(threads or settings.threads_for(q) for q in consumed) + 2)
    name = f"walletd-{role}" + (f"[{label}]" if label else "")
    engine = make_engine(settings.effective_database_url, pool_size=pool, application_name=name)
    services = Services(
        settings=settings,
        role=role,
        engine=engine,
        session_factory=make_session_factory(engine),
        read_session_factory=make_read_session_factory(engine),
        broker=broker or build_broker(settings.broker_url),
    )
    for hook in SERVICE_HOOKS:
        hook(services)
    if role in ("worker", "embedded", "cli"):
        for hook in WORKER_HOOKS:
            hook(services)
    if role in ("ingress", "embedded"):
        _ = services.waiter  # subscribed from the start, not at the first request
    if role in ("ingress", "worker", "embedded"):
        for cache in _announced_caches():
            cache.attach(services.listener)
    return services


def _announced_caches() -> list[AnnouncedCache[Any, Any]]:
    """The hot path's per-process caches the database invalidates (issue 20): the API keys
    behind stamps and the keys ``signWith`` names."""
    from infra.auth.principal import KEYS
    from infra.wallets.store import TARGETS

    return [KEYS, TARGETS]
