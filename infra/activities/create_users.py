"""``create_users``: add users (with their credentials) to the organization."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.users import UserParams, check_user, create_user
from infra.messaging import queues
from infra.sessions.oidc_login import spend_signup
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateUsersIntentV4`` (V3 and V2 have the same outer shape)."""

    users: list[UserParams] = Field(min_length=1)


def check(params: Params, ctx: CheckContext) -> None:
    for i, user in enumerate(params.users):
        check_user(ctx.session, ctx.organization_id, user, f"parameters.users[{i}]")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    ids = [create_user(ctx.session, ctx.organization_id, user, ctx.now, field=f"users[{i}]",
                       on_oidc_token=spend_signup).id
           for i, user in enumerate(params.users)]
    return {"userIds": ids}


SPEC = ActivitySpec(
    path="create_users",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_USERS_V4", Params, "createUsersIntentV4", "createUsersResult"),
        Version("ACTIVITY_TYPE_CREATE_USERS_V3", Params, "createUsersIntentV3", "createUsersResult"),
        Version("ACTIVITY_TYPE_CREATE_USERS_V2", Params, "createUsersIntentV2", "createUsersResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="CREATE",
)
