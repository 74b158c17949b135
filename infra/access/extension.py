"""Wiring of the access controls into the process (today's hooks; one place to move).

* ``v1User.mfaPolicies`` (``infra.views.users.USER_SECTIONS``);
* every role: the per-process caches of allow-lists and MFA policies follow the
  ``walletd_access_changed`` notifications (PostgreSQL) or trust in-process invalidation
  (SQLite, one process).
"""

from __future__ import annotations

from infra.access import changes, ip_allowlist, mfa, mfa_view
from infra.bootstrap import SERVICE_HOOKS, Services
from infra.views.users import USER_SECTIONS


def watch_access_changes(services: Services) -> None:
    """Every role: keep the access caches in step with changes."""
    dialect = services.engine.dialect.name
    listener = services.listener if services.role != "cli" and dialect == "postgresql" else None
    changes.watch([ip_allowlist.CACHE, mfa.CACHE], listener, dialect)


if mfa_view.user_section not in USER_SECTIONS:
    USER_SECTIONS.append(mfa_view.user_section)
if watch_access_changes not in SERVICE_HOOKS:
    SERVICE_HOOKS.append(watch_access_changes)
