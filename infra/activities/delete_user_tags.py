"""``delete_user_tags``: remove user tags; the result lists the users that carried them."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import Tag, UserTagAssignment
from infra.identity.directory import TAG_TYPE_USER, tag_in_org
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteUserTagsIntent``."""

    user_tag_ids: list[str] = Field(min_length=1)


def _tags(params: Params, session: Any, organization_id: str) -> list[Tag]:
    return [
        tag_in_org(session, organization_id, t, TAG_TYPE_USER) for t in dict.fromkeys(params.user_tag_ids)
    ]


def check(params: Params, ctx: CheckContext) -> None:
    _tags(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    tags = _tags(params, ctx.session, ctx.organization_id)
    user_ids = list(
        dict.fromkeys(
            ctx.session.scalars(
                select(UserTagAssignment.user_id).where(UserTagAssignment.tag_id.in_([t.id for t in tags]))
            )
        )
    )
    for tag in tags:
        ctx.session.delete(tag)
    return {"userTagIds": [t.id for t in tags], "userIds": user_ids}


SPEC = ActivitySpec(
    path="delete_user_tags",
    versions=(
        Version("ACTIVITY_TYPE_DELETE_USER_TAGS", Params, "deleteUserTagsIntent", "deleteUserTagsResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="DELETE",
)
