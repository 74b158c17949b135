"""Enforcing the per-organization resource limits whenever rows are written.

The limits themselves are data in :mod:`infra.validation.limits`. Enforcement hooks into
SQLAlchemy's ``before_flush`` so that every code path that creates users, API keys, passkeys,
OAuth providers, tags, invitations, contract interfaces, wallets, private keys, policies or
sub-organizations is covered — including activity modules of other concepts — without each
handler remembering to count. A violation raises
:class:`infra.validation.limits.ResourceLimitExceeded` (HTTP 429) before any SQL is sent; the
activity fails with that error and nothing of it is stored.

Expiring API keys are never refused: the oldest (expired first) are deleted in the same flush
to make room, as Turnkey does.

Counting then inserting is a race under READ COMMITTED with parallel workers, so on
PostgreSQL a flush that adds limited rows first locks the rows of the organizations concerned
(``SELECT ... FOR NO KEY UPDATE``, in id order): concurrent flushes for one organization take
turns, and each counts what the previous one committed. ``NO KEY`` keeps the lock clear of the
``KEY SHARE`` locks that foreign-key checks take, so inserting rows that merely reference the
organization is never blocked and two such transactions cannot deadlock on the upgrade.
SQLite needs nothing: it has one writer at a time.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Table, event, func, select
from sqlalchemy.orm import Session, sessionmaker

from infra.clock import as_utc
from infra.clock import now as clock_now
from infra.db.models.organizations import ApiKey, Organization
from infra.validation import limits
from infra.validation.limits import ExpiringKey, ResourceLimit

#: Organization-scoped limits by table name (tables of other concepts included by name).
ORGANIZATION_LIMITS: Final[dict[str, ResourceLimit]] = {
    "users": limits.USERS,
    "wallets": limits.WALLETS,
    "private_keys": limits.PRIVATE_KEYS,
    "policies": limits.POLICIES,
    "invitations": limits.INVITATIONS,
    "tags": limits.TAGS,
    "smart_contract_interfaces": limits.SMART_CONTRACT_INTERFACES,
}
#: User-scoped limits by table name.
USER_LIMITS: Final[dict[str, ResourceLimit]] = {
    "authenticators": limits.AUTHENTICATORS,
    "oauth_providers": limits.OAUTH_PROVIDERS,
}


def _table(obj: Any) -> Table | None:
    table = getattr(type(obj), "__table__", None)
    return table if isinstance(table, Table) else None


def _is_sub_organization(session: Session, organization_id: str) -> bool:
    org = session.get(Organization, organization_id)
    return bool(org is not None and org.parent_id)


def _count(session: Session, table: Table, column: str, value: str) -> int:
    return int(
        session.execute(
            select(func.count()).select_from(table).where(table.c[column] == value)
        ).scalar_one()
    )


def enforce(session: Session, now: datetime | None = None) -> None:
    """Check every pending insert of ``session`` against its limit.

    Raises:
        ResourceLimitExceeded: a limit would be exceeded.
    """
    pending = list(session.new)
    if not pending:
        return
    moment = now or clock_now()
    with session.no_autoflush:
        lock_organizations(session, pending)
        _check_sub_organizations(session, pending)
        _check_scoped(session, pending, ORGANIZATION_LIMITS, "organization_id")
        _check_scoped(session, pending, USER_LIMITS, "user_id")
        _check_api_keys(session, pending, moment)


def _limited_organizations(pending: list[Any]) -> set[str]:
    """Ids of the stored organizations whose counted limits ``pending`` inserts are checked
    against. New sub-organizations are not counted (a parent may have any number, a
    sub-organization none), so creating them does not serialize on the parent."""
    limited = {*ORGANIZATION_LIMITS, *USER_LIMITS, ApiKey.__tablename__}
    new_orgs = {obj.id for obj in pending if isinstance(obj, Organization)}
    ids: set[str] = set()
    for obj in pending:
        table = _table(obj)
        if table is None or table.name not in limited:
            continue
        owner = getattr(obj, "organization_id", None)
        if owner and owner not in new_orgs:
            ids.add(str(owner))
    return ids


def lock_organizations(session: Session, pending: list[Any]) -> None:
    """Serialize limit checks per organization on PostgreSQL (no-op on other databases)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    ids = _limited_organizations(pending)
    if ids:
        session.execute(
            select(Organization.id)
            .where(Organization.id.in_(sorted(ids)))
            .order_by(Organization.id)
            .with_for_update(key_share=True)
        ).all()


def _check_sub_organizations(session: Session, pending: list[Any]) -> None:
    for obj in pending:
        if isinstance(obj, Organization) and obj.parent_id:
            limits.SUB_ORGANIZATIONS.check(
                0, is_sub_organization=_is_sub_organization(session, obj.parent_id)
            )


def _check_scoped(
    session: Session, pending: list[Any], table_limits: dict[str, ResourceLimit], column: str
) -> None:
    adding: Counter[tuple[str, str]] = Counter()
    tables: dict[str, Table] = {}
    for obj in pending:
        table = _table(obj)
        if table is None or table.name not in table_limits or column not in table.c:
            continue
        owner = getattr(obj, column, None)
        if owner:
            adding[(table.name, owner)] += 1
            tables[table.name] = table
    removing: Counter[tuple[str, str]] = Counter()
    for obj in session.deleted:
        table = _table(obj)
        if table is not None and (table.name, getattr(obj, column, None)) in adding:
            removing[(table.name, getattr(obj, column))] += 1
    for (name, owner), count in adding.items():
        limit = table_limits[name]
        org_id = owner if column == "organization_id" else _organization_of(pending, owner)
        is_sub = bool(org_id) and _is_sub_organization(session, str(org_id))
        if limit.maximum_for(is_sub_organization=is_sub) is None:
            continue
        current = _count(session, tables[name], column, owner) - removing[(name, owner)]
        limit.check(current, adding=count, is_sub_organization=is_sub)


def _organization_of(pending: list[Any], user_id: str) -> str | None:
    for obj in pending:
        if getattr(obj, "user_id", None) == user_id and getattr(obj, "organization_id", None):
            return str(obj.organization_id)
    return None


def _check_api_keys(session: Session, pending: list[Any], now: datetime) -> None:
    new_keys = [obj for obj in pending if isinstance(obj, ApiKey)]
    by_user: dict[str, list[ApiKey]] = {}
    for key in new_keys:
        by_user.setdefault(key.user_id, []).append(key)
    for user_id, keys in by_user.items():
        is_sub = _is_sub_organization(session, keys[0].organization_id)
        existing = session.scalars(select(ApiKey).where(ApiKey.user_id == user_id)).all()
        existing = [k for k in existing if k not in session.deleted and k not in keys]
        long_lived = [k for k in keys if k.expires_at is None]
        if long_lived:
            current = sum(1 for k in existing if k.expires_at is None)
            limits.LONG_LIVED_API_KEYS.check(
                current, adding=len(long_lived), is_sub_organization=is_sub
            )
        expiring = [k for k in keys if k.expires_at is not None]
        if expiring:
            held = [
                ExpiringKey(k.id, as_utc(k.created_at), as_utc(k.expires_at))
                for k in existing
                if k.expires_at is not None
            ]
            evict = set(
                limits.expiring_keys_to_evict(
                    held, now=now, adding=len(expiring), is_sub_organization=is_sub
                )
            )
            for key in existing:
                if key.id in evict:
                    session.delete(key)


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    enforce(session)


def install(session_factory: sessionmaker[Session]) -> None:
    """Enforce the quotas before every flush of ``session_factory``'s sessions (idempotent;
    called by ``infra.bootstrap``)."""
    if not event.contains(session_factory, "before_flush", _before_flush):
        event.listen(session_factory, "before_flush", _before_flush)
