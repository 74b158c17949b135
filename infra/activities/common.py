"""Lookups shared by activity handlers (not an activity type)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from infra.db.models.organizations import User
from infra.errors import NotFound


def user_in_org(session: Session, organization_id: str, user_id: str) -> User:
    """The user ``user_id`` of ``organization_id``, or a 404."""
    user = session.get(User, user_id)
    if user is None or user.organization_id != organization_id:
        raise NotFound(f"user not found in organization: {user_id}")
    return user
