"""``update_user_phone_number``: set (or, with an empty value, clear) an E.164 number."""

from __future__ import annotations

from typing import Any

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.verified import set_phone
from infra.messaging import queues
from infra.sessions.proofs import contact_token
from infra.validation.contact import optional_phone_number
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateUserPhoneNumberIntent``: ``verificationToken`` (issued for the new number)
    makes the number count for logins (``infra.identity.verified``)."""

    user_id: str
    user_phone_number: str
    verification_token: str | None = None


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    optional_phone_number(params.user_phone_number, field="parameters.userPhoneNumber")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user = user_in_org(ctx.session, ctx.organization_id, params.user_id)
    phone = optional_phone_number(params.user_phone_number, field="parameters.userPhoneNumber")
    proven = contact_token(ctx, params.verification_token, "OTP_TYPE_SMS", phone,
                           "parameters.userPhoneNumber")
    set_phone(user, phone, proven=proven, now=ctx.now)
    user.updated_at = ctx.now
    return {"userId": user.id}


SPEC = ActivitySpec(
    path="update_user_phone_number",
    versions=(
        Version(
            "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
            Params,
            "updateUserPhoneNumberIntent",
            "updateUserPhoneNumberResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="UPDATE",
)
