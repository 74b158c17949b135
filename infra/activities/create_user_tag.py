"""``create_user_tag``: a named user tag, optionally applied to users at once."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.directory import (
    TAG_TYPE_USER,
    assign_user_tag,
    check_tag_name_free,
    create_tag,
    users_in_org,
)
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateUserTagIntent``."""

    user_tag_name: str = Field(min_length=1, max_length=256)
    user_ids: list[str] = Field(default_factory=list)


def check(params: Params, ctx: CheckContext) -> None:
    users_in_org(ctx.session, ctx.organization_id, params.user_ids)
    check_tag_name_free(ctx.session, ctx.organization_id, TAG_TYPE_USER, params.user_tag_name)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    users = users_in_org(ctx.session, ctx.organization_id, params.user_ids)
    tag = create_tag(ctx.session, ctx.organization_id, TAG_TYPE_USER, params.user_tag_name, ctx.now)
    assign_user_tag(ctx.session, tag, [u.id for u in users])
    return {"userTagId": tag.id, "userIds": [u.id for u in users]}


SPEC = ActivitySpec(
    path="create_user_tag",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_USER_TAG", Params, "createUserTagIntent", "createUserTagResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="CREATE",
)
