"""How MFA policies look on the wire: ``v1MfaPolicy`` and ``v1User.mfaPolicies``.

Kept apart from :mod:`infra.pipeline.mfa` (enforcement) so that rendering users needs nothing
but the models.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.clock import wire_timestamp
from infra.db.models.access import MfaPolicy


def render(row: MfaPolicy) -> dict[str, Any]:
    """``v1MfaPolicy``."""
    out: dict[str, Any] = {
        "mfaPolicyId": row.id, "mfaPolicyName": row.name, "condition": row.condition,
        "requiredAuthenticationMethods": list(row.required_methods or []),
        "order": row.order, "createdAt": wire_timestamp(row.created_at),
        "updatedAt": wire_timestamp(row.updated_at)}
    if row.notes:
        out["notes"] = row.notes
    return out


def user_section(session: Session, user_ids: Iterable[str]) -> dict[str, dict[str, list[Any]]]:
    """``USER_SECTIONS`` entry: each user's ``mfaPolicies`` (``v1User``), in evaluation order."""
    found: dict[str, dict[str, list[Any]]] = {}
    for row in session.scalars(select(MfaPolicy).where(MfaPolicy.user_id.in_(list(user_ids)))
                               .order_by(MfaPolicy.order, MfaPolicy.created_at, MfaPolicy.id)):
        found.setdefault(row.user_id, {"mfaPolicies": []})["mfaPolicies"].append(render(row))
    return found
