"""``otp_auth``: a right code from ``init_otp_auth`` buys a credential bundle session."""

from __future__ import annotations

from typing import Any

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, CheckContext, Version
from infra.db.models.organizations import User
from infra.errors import InvalidRequest
from infra.sessions.credential_bundles import issue_bundle
from infra.sessions.flows import check_code
from infra.sessions.otp import INVALID_CODE
from infra.sessions.params import seconds, timestamp_name
from infra.sessions.tokens import DEFAULT_SESSION_SECONDS, credential_bundle
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
    issued = issue_bundle(
        ctx, user_id=user.id, target_public_key=params.target_public_key,
        expiration_seconds=seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS),
        invalidate_existing=params.invalidate_existing,
        name=params.api_key_name or timestamp_name("OTP Auth", ctx.now),
        credential_type=CREDENTIAL_TYPE)
    return {"userId": user.id, "apiKeyId": issued.api_key_id, "credentialBundle": issued.bundle}


SPEC = login_spec(
    "otp_auth",
    Version("ACTIVITY_TYPE_OTP_AUTH", Params, "otpAuthIntent", "otpAuthResult"),
    execute=execute,
    check=check,
)
