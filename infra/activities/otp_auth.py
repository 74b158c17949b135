"""``otp_auth``: a right code from ``init_otp_auth`` buys a credential bundle session."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import User
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.sessions.flows import check_code
from infra.sessions.otp import INVALID_CODE
from infra.sessions.params import seconds, timestamp_name
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    credential_bundle,
    new_session_key,
)
from infra.wiremodel import WireModel

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_OTP_AUTH_KEY_P256"


class Params(WireModel):
    """``v1OtpAuthIntent``."""

    otp_id: str
    otp_code: str
    target_public_key: str
    api_key_name: str | None = None
    expiration_seconds: str | None = None
    invalidate_existing: bool = False


def check(params: Params, ctx: CheckContext) -> None:
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    credential_bundle(params.target_public_key, b"\x01" * 32)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = check_code(ctx, otp_id=params.otp_id, code=params.otp_code, purpose="otp_auth",
                     field="otpCode")
    user = ctx.session.get(User, row.user_id) if row.user_id else None
    if user is None:
        raise InvalidRequest(INVALID_CODE)
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    public_key, private_key = new_session_key()
    key_id = add_login_credential(
        ctx, user_id=user.id, public_key_hex=public_key, expiration_seconds=ttl,
        invalidate_existing=params.invalidate_existing,
        name=params.api_key_name or timestamp_name("OTP Auth", ctx.now),
        credential_type=CREDENTIAL_TYPE)
    return {"userId": user.id, "apiKeyId": key_id,
            "credentialBundle": credential_bundle(params.target_public_key, private_key)}


SPEC = ActivitySpec(
    path="otp_auth",
    versions=(Version("ACTIVITY_TYPE_OTP_AUTH", Params, "otpAuthIntent", "otpAuthResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="AUTH",
    action="CREATE",
    parent_may_submit=True,
)
