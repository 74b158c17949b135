"""``update_user``: change a user's name, email, phone number and tags in one activity.

Absent fields stay as they are; an empty ``userEmail`` / ``userPhoneNumber`` clears it;
``userTagIds`` (when present) becomes the user's complete set of tags.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import delete

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import UserTagAssignment
from infra.errors import InvalidRequest
from infra.identity.directory import TAG_TYPE_USER, assign_user_tag, tag_in_org
from infra.messaging import queues
from infra.validation.contact import optional_email_address, optional_phone_number
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateUserIntent``."""

    user_id: str
    user_name: str | None = Field(default=None, max_length=256)
    user_email: str | None = None
    user_tag_ids: list[str] | None = None
    user_phone_number: str | None = None


def _validate(params: Params, session: Any, organization_id: str) -> None:
    user_in_org(session, organization_id, params.user_id)
    if params.user_name is not None and not params.user_name.strip():
        raise InvalidRequest("userName must not be empty", field="parameters.userName")
    optional_email_address(params.user_email, field="parameters.userEmail")
    optional_phone_number(params.user_phone_number, field="parameters.userPhoneNumber")
    for tag_id in params.user_tag_ids or []:
        tag_in_org(session, organization_id, tag_id, TAG_TYPE_USER)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params, ctx.session, ctx.organization_id)
    user = user_in_org(ctx.session, ctx.organization_id, params.user_id)
    if params.user_name is not None:
        user.name = params.user_name
    if params.user_email is not None:
        user.email = params.user_email or None
    if params.user_phone_number is not None:
        user.phone_number = params.user_phone_number or None
    if params.user_tag_ids is not None:
        ctx.session.execute(delete(UserTagAssignment).where(UserTagAssignment.user_id == user.id))
        for tag_id in params.user_tag_ids:
            assign_user_tag(
                ctx.session,
                tag_in_org(ctx.session, ctx.organization_id, tag_id, TAG_TYPE_USER),
                [user.id],
            )
    user.updated_at = ctx.now
    return {"userId": user.id}


SPEC = ActivitySpec(
    path="update_user",
    versions=(Version("ACTIVITY_TYPE_UPDATE_USER", Params, "updateUserIntent", "updateUserResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="UPDATE",
)
