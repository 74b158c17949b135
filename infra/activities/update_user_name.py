"""``update_user_name``: rename a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateUserNameIntent``."""

    user_id: str
    user_name: str = Field(min_length=1, max_length=256)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user = user_in_org(ctx.session, ctx.organization_id, params.user_id)
    user.name = params.user_name
    return {"userId": user.id}


SPEC = ActivitySpec(
    path="update_user_name",
    versions=(Version("ACTIVITY_TYPE_UPDATE_USER_NAME", Params, "updateUserNameIntent",
                      "updateUserNameResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="UPDATE",
)
