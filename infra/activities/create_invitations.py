"""``create_invitations``: invite people to join the organization as users."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import Invitation
from infra.identity.directory import TAG_TYPE_USER, tag_in_org
from infra.messaging import queues
from infra.validation.contact import validate_email_address
from infra.wiremodel import WireModel


class InvitationParams(WireModel):
    """``v1InvitationParams``."""

    receiver_user_name: str = Field(min_length=1, max_length=256)
    receiver_user_email: str
    receiver_user_tags: list[str] = Field(default_factory=list)
    access_type: Literal["ACCESS_TYPE_WEB", "ACCESS_TYPE_API", "ACCESS_TYPE_ALL"]
    sender_user_id: str


class Params(WireModel):
    """``v1CreateInvitationsIntent``."""

    invitations: list[InvitationParams] = Field(min_length=1)


def _validate(params: Params, session: Any, organization_id: str) -> None:
    for i, invitation in enumerate(params.invitations):
        validate_email_address(
            invitation.receiver_user_email, field=f"parameters.invitations[{i}].receiverUserEmail"
        )
        user_in_org(session, organization_id, invitation.sender_user_id)
        for tag_id in invitation.receiver_user_tags:
            tag_in_org(session, organization_id, tag_id, TAG_TYPE_USER)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params, ctx.session, ctx.organization_id)
    rows = [
        Invitation(
            organization_id=ctx.organization_id,
            receiver_user_name=invitation.receiver_user_name,
            receiver_email=invitation.receiver_user_email,
            receiver_user_tags=list(invitation.receiver_user_tags),
            access_type=invitation.access_type,
            sender_user_id=invitation.sender_user_id,
            created_at=ctx.now,
            updated_at=ctx.now,
        )
        for invitation in params.invitations
    ]
    ctx.session.add_all(rows)
    ctx.session.flush()
    return {"invitationIds": [r.id for r in rows]}


SPEC = ActivitySpec(
    path="create_invitations",
    versions=(
        Version(
            "ACTIVITY_TYPE_CREATE_INVITATIONS", Params, "createInvitationsIntent", "createInvitationsResult"
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="INVITATION",
    action="CREATE",
)
