"""``update_user_tag``: rename a user tag and add or remove users."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import delete

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import UserTagAssignment
from infra.identity.directory import (
    TAG_TYPE_USER,
    assign_user_tag,
    check_tag_name_free,
    tag_in_org,
    users_in_org,
)
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateUserTagIntent``."""

    user_tag_id: str
    new_user_tag_name: str | None = Field(default=None, max_length=256)
    add_user_ids: list[str] = Field(default_factory=list)
    remove_user_ids: list[str] = Field(default_factory=list)


def _validate(params: Params, session: Any, organization_id: str) -> None:
    tag_in_org(session, organization_id, params.user_tag_id, TAG_TYPE_USER)
    users_in_org(session, organization_id, [*params.add_user_ids, *params.remove_user_ids])
    if params.new_user_tag_name:
        check_tag_name_free(
            session, organization_id, TAG_TYPE_USER, params.new_user_tag_name, except_id=params.user_tag_id
        )


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params, ctx.session, ctx.organization_id)
    tag = tag_in_org(ctx.session, ctx.organization_id, params.user_tag_id, TAG_TYPE_USER)
    if params.new_user_tag_name:
        tag.name = params.new_user_tag_name
    tag.updated_at = ctx.now
    assign_user_tag(ctx.session, tag, params.add_user_ids)
    if params.remove_user_ids:
        ctx.session.execute(
            delete(UserTagAssignment).where(
                UserTagAssignment.tag_id == tag.id, UserTagAssignment.user_id.in_(params.remove_user_ids)
            )
        )
    return {"userTagId": tag.id}


SPEC = ActivitySpec(
    path="update_user_tag",
    versions=(
        Version("ACTIVITY_TYPE_UPDATE_USER_TAG", Params, "updateUserTagIntent", "updateUserTagResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="UPDATE",
)
