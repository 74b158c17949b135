"""``update_user_email``: set (or, with an empty value, clear) a user's email address."""

from __future__ import annotations

from typing import Any

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.validation.contact import optional_email_address
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateUserEmailIntent`` (``verificationToken`` is accepted and not required)."""

    user_id: str
    user_email: str
    verification_token: str | None = None


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    optional_email_address(params.user_email, field="parameters.userEmail")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user = user_in_org(ctx.session, ctx.organization_id, params.user_id)
    user.email = optional_email_address(params.user_email, field="parameters.userEmail")
    user.updated_at = ctx.now
    return {"userId": user.id}


SPEC = ActivitySpec(
    path="update_user_email",
    versions=(
        Version("ACTIVITY_TYPE_UPDATE_USER_EMAIL", Params, "updateUserEmailIntent", "updateUserEmailResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="UPDATE",
)
