"""Per-process knowledge of access controls, forgotten whenever they change.

Allow-lists and MFA policies are read on every authenticated request / every execution, and
almost every organization has none, so what was read is remembered per organization. It is
trusted only while changes are sure to reach this process:

* PostgreSQL: a trigger announces every write to ``ip_allowlists`` and ``mfa_policies`` on
  ``walletd_access_changed`` (payload: organization id; migration ``0025_access_controls``)
  to every process's one ``LISTEN`` connection (``infra.db.listen``); nothing is trusted
  while it is disconnected, and everything is forgotten when it reconnects.
* SQLite (the embedded ``walletd up``, one process): the activity that changes a control
  forgets it right after its commit (:func:`forget_after_commit`, ``uow.after_commit``).

A generation number keeps a read that raced a change from being remembered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from infra.db.listen import Listener
from infra.db.unit_of_work import UnitOfWork

CHANNEL: Final = "walletd_access_changed"
T = TypeVar("T")


class OrganizationCache(Generic[T]):
    """``organization id -> T`` remembered while changes are announced."""

    _MAX = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, T] = {}
        self._generation = 0
        self._listener: Listener | None = None
        self._in_process = False

    def watch(self, listener: Listener | None, *, in_process: bool) -> None:
        """Trust remembered values while ``listener`` is connected (PostgreSQL), or always
        when every change happens in this process (``in_process``: SQLite)."""
        self._in_process = in_process
        if listener is not None:
            listener.subscribe(CHANNEL, self.forget, lambda: self.forget(None))
            self._listener = listener

    def forget(self, organization_id: str | None) -> None:
        """Forget one organization (``None``: all of them)."""
        with self._lock:
            self._generation += 1
            if organization_id is None:
                self._values.clear()
            else:
                self._values.pop(organization_id, None)

    def get(self, organization_id: str, load: Callable[[], T]) -> T:
        """The remembered value, or ``load()`` (remembered when nothing changed meanwhile)."""
        live = self._live()
        if live:
            with self._lock:
                if organization_id in self._values:
                    return self._values[organization_id]
                generation = self._generation
        value = load()
        if live:
            with self._lock:
                if generation == self._generation and len(self._values) < self._MAX:
                    self._values[organization_id] = value
        return value

    def _live(self) -> bool:
        if self._in_process:
            return True
        return self._listener is not None and self._listener.connected.is_set()


def watch(caches: list[OrganizationCache[Any]], listener: Listener | None, dialect: str) -> None:
    """Subscribe ``caches`` (once per process, from the composition root)."""
    for each in caches:
        each.watch(listener, in_process=dialect == "sqlite")


def forget_after_commit(uow: UnitOfWork, cache: OrganizationCache[Any], organization_id: str) -> None:
    """Forget ``organization_id`` in ``cache`` once ``uow`` commits."""
    uow.after_commit(lambda: cache.forget(organization_id))
