"""``delete_authenticators``: remove passkeys of a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import Authenticator
from infra.errors import NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteAuthenticatorsIntent``."""

    user_id: str
    authenticator_ids: list[str] = Field(min_length=1)


def _find(params: Params, session: Any, organization_id: str) -> list[Authenticator]:
    user_in_org(session, organization_id, params.user_id)
    rows = session.scalars(
        select(Authenticator).where(
            Authenticator.id.in_(params.authenticator_ids), Authenticator.user_id == params.user_id
        )
    ).all()
    missing = set(params.authenticator_ids) - {r.id for r in rows}
    if missing:
        raise NotFound(f"authenticators not found for user {params.user_id}: {', '.join(sorted(missing))}")
    return list(rows)


def check(params: Params, ctx: CheckContext) -> None:
    _find(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    for row in _find(params, ctx.session, ctx.organization_id):
        ctx.session.delete(row)
    return {"authenticatorIds": list(dict.fromkeys(params.authenticator_ids))}


SPEC = ActivitySpec(
    path="delete_authenticators",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_AUTHENTICATORS",
            Params,
            "deleteAuthenticatorsIntent",
            "deleteAuthenticatorsResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="CREDENTIAL",
    action="DELETE",
)
