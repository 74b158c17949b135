"""Wire views of users and their credentials (``v1User``, ``v1ApiKey``).

Other concepts add to a user's view through ``USER_SECTIONS`` (authenticators, OAuth
providers, tags): each is ``section(session, user_ids) -> {user_id: {wire_key: [...]}}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.clock import wire_timestamp
from infra.db.models.organizations import ApiKey, User

Section = Callable[[Session, Sequence[str]], dict[str, dict[str, list[Any]]]]
USER_SECTIONS: list[Section] = []


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


def render_users(session: Session, users: Sequence[User]) -> list[dict[str, Any]]:
    """``v1User`` for each of ``users`` (batched: one query per section)."""
    ids = [u.id for u in users]
    keys: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        for key in session.scalars(_API_KEYS, {"ids": ids}):
            keys[key.user_id].append(render_api_key(key))
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
        out.append(view)
    return out


def render_user(session: Session, user: User) -> dict[str, Any]:
    """``v1User`` for one user."""
    return render_users(session, [user])[0]
