"""Wire views of users and their credentials (``v1User``, ``v1ApiKey``).

Other concepts add to a user's view through ``USER_SECTIONS`` below (OAuth providers and
tags, authenticators): each is ``section(session, user_ids) -> {user_id: {wire_key: [...]}}``.
A section's table must also move ``users.view_version`` (``infra.db.triggers``).

Rendered views are remembered per process by ``(user id, users.view_version)``: every vote
of every rendered activity shows its user, and that view changes rarely. Database triggers
move the version on every write that changes the view; an entry also lapses when one of
the user's API keys expires. Callers get their own top-level dict; nested lists are shared
and must not be changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.clock import as_utc, now, wire_timestamp
from infra.db.models.organizations import ApiKey, User
from infra.identity.directory import user_identity_section
from infra.identity.passkeys import authenticators_section

Section = Callable[[Session, Sequence[str]], dict[str, dict[str, list[Any]]]]
#: The sections of ``v1User`` beyond its own columns and API keys, in order.
USER_SECTIONS: Final[tuple[Section, ...]] = (
    user_identity_section,   # oauthProviders, userTags
    authenticators_section,  # authenticators
)


def render_api_key(key: ApiKey) -> dict[str, Any]:
    """``v1ApiKey``."""
    out: dict[str, Any] = {
        "credential": {"publicKey": key.public_key, "type": key.credential_type},
        "apiKeyId": key.id,
        "apiKeyName": key.name,
        "createdAt": wire_timestamp(key.created_at),
        "updatedAt": wire_timestamp(key.updated_at),
    }
    if key.expiration_seconds:
        out["expirationSeconds"] = key.expiration_seconds
    return out


#: Built once (every rendered vote renders its user).
_API_KEYS: Final = (select(ApiKey).where(ApiKey.user_id.in_(bindparam("ids", expanding=True)))
                    .order_by(ApiKey.created_at))


_REMEMBERED_MAX: Final = 10_000
#: (user id, view_version) -> (view, moment it lapses or None)
_remembered: dict[tuple[str, int], tuple[dict[str, Any], datetime | None]] = {}
_remembered_lock = threading.Lock()


def render_users(session: Session, users: Sequence[User]) -> list[dict[str, Any]]:
    """``v1User`` for each of ``users`` (remembered ones first; the rest batched: one
    query per section)."""
    moment = now()
    found: dict[str, dict[str, Any]] = {}
    with _remembered_lock:
        for user in users:
            entry = _remembered.get((user.id, user.view_version or 0))
            if entry is not None and (entry[1] is None or moment < entry[1]):
                found[user.id] = entry[0]
    missing = [u for u in users if u.id not in found]
    if missing:
        for user, view, lapses in _render(session, missing):
            found[user.id] = view
            with _remembered_lock:
                if len(_remembered) >= _REMEMBERED_MAX:
                    _remembered.clear()
                _remembered[(user.id, user.view_version or 0)] = (view, lapses)
    return [dict(found[u.id]) for u in users]


def _render(session: Session,
            users: Sequence[User]) -> list[tuple[User, dict[str, Any], datetime | None]]:
    ids = [u.id for u in users]
    keys: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    lapses: dict[str, datetime] = {}
    for key in session.scalars(_API_KEYS, {"ids": ids}):
        keys[key.user_id].append(render_api_key(key))
        if key.expires_at is not None:
            expires = as_utc(key.expires_at)
            lapses[key.user_id] = min(expires, lapses.get(key.user_id, expires))
    extra: dict[str, dict[str, list[Any]]] = {i: {} for i in ids}
    for section in USER_SECTIONS:
        for user_id, fields in section(session, ids).items():
            extra.setdefault(user_id, {}).update(fields)
    out = []
    for user in users:
        view: dict[str, Any] = {
            "userId": user.id,
            "userName": user.name,
            "authenticators": [],
            "apiKeys": keys[user.id],
            "userTags": [],
            "oauthProviders": [],
            "createdAt": wire_timestamp(user.created_at),
            "updatedAt": wire_timestamp(user.updated_at),
            "mfaPolicies": [],
        }
        if user.email:
            view["userEmail"] = user.email
        if user.phone_number:
            view["userPhoneNumber"] = user.phone_number
        view.update(extra.get(user.id, {}))
        out.append((user, view, lapses.get(user.id)))
    return out


def render_user(session: Session, user: User) -> dict[str, Any]:
    """``v1User`` for one user."""
    return render_users(session, [user])[0]
