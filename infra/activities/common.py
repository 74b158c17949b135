"""Lookups shared by activity handlers (not an activity type)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.organizations import User
from infra.errors import NotFound


def user_in_org(session: Session, organization_id: str, user_id: str) -> User:
    """The user ``user_id`` of ``organization_id``, or a 404."""
    user = session.get(User, user_id)
    if user is None or user.organization_id != organization_id:
        raise NotFound(f"user not found in organization: {user_id}")
    return user


def owned_by_user(session: Session, model: Any, organization_id: str, user_id: str,
                  ids: Sequence[str], noun: str) -> list[Any]:
    """Rows of ``model`` with ``ids`` that belong to ``user_id`` of the organization.

    ``model`` needs ``id`` and ``user_id`` columns. Raises a 404 for an unknown user, and a
    404 naming every id that is not one of the user's ``noun``.
    """
    user_in_org(session, organization_id, user_id)
    rows = session.scalars(select(model).where(model.id.in_(ids), model.user_id == user_id)).all()
    missing = set(ids) - {r.id for r in rows}
    if missing:
        raise NotFound(f"{noun} not found for user {user_id}: {', '.join(sorted(missing))}")
    return list(rows)
