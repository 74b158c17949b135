"""``verify_otp`` (V1 clear code, V2 ``encryptedOtpBundle``): a right code → verification token.

The token (PROTOCOL.md §7.3) is bound to the client key: V1's ``publicKey``, V2's key inside
the encrypted bundle. It serves one sign-up and one login.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.sessions.flows import check_code
from infra.sessions.params import seconds
from infra.sessions.tokens import p256_public_key
from infra.sessions.verification import (
    DEFAULT_TOKEN_SECONDS,
    MAX_TOKEN_SECONDS,
    issue_token,
    open_otp_bundle,
)
from infra.wiremodel import WireModel
from infra.worker_services import service_keys


class ParamsV1(WireModel):
    """``v1VerifyOtpIntent``."""

    otp_id: str
    otp_code: str
    expiration_seconds: str | None = None
    public_key: str | None = None


class Params(WireModel):
    """``v1VerifyOtpIntentV2``."""

    otp_id: str
    encrypted_otp_bundle: str
    expiration_seconds: str | None = None


def _ttl(params: ParamsV1 | Params) -> int:
    return seconds(params.expiration_seconds, DEFAULT_TOKEN_SECONDS, maximum=MAX_TOKEN_SECONDS)


def check(params: ParamsV1 | Params, ctx: CheckContext) -> None:
    _ttl(params)
    if isinstance(params, ParamsV1) and params.public_key:
        p256_public_key(params.public_key, "publicKey")


def execute(params: ParamsV1 | Params, ctx: ActivityContext) -> dict[str, Any]:
    keys = service_keys(ctx.services)
    if isinstance(params, Params):
        code, public_key = open_otp_bundle(ctx.session, keys, params.encrypted_otp_bundle)
    else:
        code, public_key = params.otp_code, params.public_key or ""
    row = check_code(ctx, otp_id=params.otp_id, code=code, purpose="otp", field="otpCode")
    bound = p256_public_key(public_key, "publicKey") if public_key else ""
    token = issue_token(ctx.session, keys, organization_id=row.organization_id, otp_id=row.id,
                        verification_type=row.otp_type, contact=row.contact, public_key=bound,
                        seconds=_ttl(params), now=ctx.now, activity_id=ctx.activity.id)
    return {"verificationToken": token}


SPEC = ActivitySpec(
    path="verify_otp",
    versions=(
        Version("ACTIVITY_TYPE_VERIFY_OTP_V2", Params, "verifyOtpIntentV2", "verifyOtpResult"),
        Version("ACTIVITY_TYPE_VERIFY_OTP", ParamsV1, "verifyOtpIntent", "verifyOtpResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="OTP",
    action="VERIFY",
    parent_may_submit=True,
)
