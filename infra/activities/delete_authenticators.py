"""``delete_authenticators``: remove passkeys of a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from infra.activities.common import owned_by_user
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import Authenticator
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteAuthenticatorsIntent``."""

    user_id: str
    authenticator_ids: list[str] = Field(min_length=1, max_length=caps.IDS)


def _find(params: Params, session: Session, organization_id: str) -> list[Authenticator]:
    return owned_by_user(session, Authenticator, organization_id, params.user_id, params.authenticator_ids,
                         "authenticators")


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
