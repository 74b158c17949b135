"""``update_user_email``: set (or, with an empty value, clear) a user's email address."""

from __future__ import annotations

from typing import Any

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.verified import set_email
from infra.messaging import queues
from infra.sessions.proofs import contact_token
from infra.validation.contact import optional_email_address
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateUserEmailIntent``.

    ``verificationToken`` (a ``verify_otp`` token issued for the new address) is what makes
    the address count for logins; without it (and unless the operator sets it) the address
    is stored unverified (``infra.identity.verified``).
    """

    user_id: str
    user_email: str
    verification_token: str | None = None


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    optional_email_address(params.user_email, field="parameters.userEmail")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user = user_in_org(ctx.session, ctx.organization_id, params.user_id)
    email = optional_email_address(params.user_email, field="parameters.userEmail")
    proven = contact_token(ctx, params.verification_token, "OTP_TYPE_EMAIL", email,
                           "parameters.userEmail")
    set_email(user, email, proven=proven, now=ctx.now)
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
