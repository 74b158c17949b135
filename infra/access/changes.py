"""Per-process knowledge of access controls, forgotten when the database announces a change.

Allow-lists, MFA policies and session profiles are read on every authenticated request /
every execution, and almost every organization has none, so what was read is remembered per
process. They are caches like the API key behind a stamp (``infra.db.announced``): the
database itself tells them to forget, whatever wrote the change (an activity, another
process, a plain SQL ``UPDATE``):

* PostgreSQL: a statement trigger on ``ip_allowlists``, ``mfa_policies`` and
  ``session_profiles`` sends ``NOTIFY walletd_rows_changed`` with the table's name (migration
  ``0032_access_announced``) to every process's one ``LISTEN`` connection; nothing is
  trusted while it is disconnected.
* SQLite: triggers count the writes in ``rows_changed`` and ``CountedChanges`` reads the
  counts before a cache answers.

A change forgets everything a cache holds (changes are rare); a read that raced a change is
never remembered (``AnnouncedCache.token``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from infra.db.announced import AnnouncedCache, Announcer

T = TypeVar("T")


class OrganizationCache(Generic[T]):
    """``organization id -> T`` remembered while changes to ``tables`` are announced."""

    def __init__(self, name: str, tables: tuple[str, ...]) -> None:
        # One-tuples: ``None`` (an organization without a control) is a value worth keeping.
        self._cache: AnnouncedCache[str, tuple[T]] = AnnouncedCache(name, tables, 100_000)

    def attach(self, announcer: Announcer | None) -> None:
        """Follow ``announcer`` (once per process, from the composition root); without one
        (the CLI) every lookup reads."""
        self._cache.attach(announcer)

    def get(self, organization_id: str, load: Callable[[], T]) -> T:
        """The remembered value, or ``load()`` (remembered when nothing changed meanwhile)."""
        found = self._cache.get(organization_id)
        if found is not None:
            return found[0]
        token = self._cache.token()
        value = load()
        self._cache.put(organization_id, (value,), token)
        return value
