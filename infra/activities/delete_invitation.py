"""``delete_invitation``: withdraw an invitation."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import Invitation
from infra.errors import NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteInvitationIntent``."""

    invitation_id: str


def _find(params: Params, session: Any, organization_id: str) -> Invitation:
    row = session.get(Invitation, params.invitation_id)
    if row is None or row.organization_id != organization_id:
        raise NotFound(f"invitation not found in organization: {params.invitation_id}")
    return row


def check(params: Params, ctx: CheckContext) -> None:
    _find(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    ctx.session.delete(_find(params, ctx.session, ctx.organization_id))
    return {"invitationId": params.invitation_id}


SPEC = ActivitySpec(
    path="delete_invitation",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_INVITATION", Params, "deleteInvitationIntent", "deleteInvitationResult"
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="INVITATION",
    action="DELETE",
)
