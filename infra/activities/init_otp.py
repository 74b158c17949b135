"""``init_otp`` (V1 to V3): send a code to any contact (sign-up or login, user or not).

V3 (and V2) answer with ``otpEncryptionTargetBundle``: the service encryption key signed by
the verification-token key, which ``encryptOtpCodeToBundle`` checks before sealing the code
for ``verify_otp`` V2.
"""

from __future__ import annotations

from typing import Any

from infra.activities.init_otp_auth import ParamsV2 as AuthParamsV2
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.sessions import otp
from infra.sessions.delivery import check_sms_template
from infra.sessions.flows import send_code
from infra.sessions.params import email_customization, normalize_contact
from infra.sessions.verification import otp_target_bundle
from infra.worker_services import service_keys


class ParamsV1(AuthParamsV2):
    """``v1InitOtpIntent``."""

    expiration_seconds: str | None = None


class Params(ParamsV1):
    """``v1InitOtpIntentV2`` / ``V3``."""

    app_name: str


def check(params: ParamsV1, ctx: CheckContext) -> None:
    otp.validated_length(params.otp_length, otp.DEFAULT_LENGTH)
    otp.validated_expiration(params.expiration_seconds)
    normalize_contact(params.otp_type, params.contact)
    email_customization(params.email_customization)
    if params.otp_type == "OTP_TYPE_SMS":
        check_sms_template(params.sms_customization.template if params.sms_customization
                           else None)


def execute(params: ParamsV1, ctx: ActivityContext) -> dict[str, Any]:
    contact = normalize_contact(params.otp_type, params.contact)
    expiration = otp.validated_expiration(params.expiration_seconds)
    row = send_code(
        ctx, purpose="otp", otp_type=params.otp_type, contact=contact, user_id=None,
        organization_id=ctx.organization_id,
        length=otp.validated_length(params.otp_length, otp.DEFAULT_LENGTH),
        alphanumeric=True if params.alphanumeric is None else params.alphanumeric,
        expiration_seconds=expiration,
        email=email_customization(params.email_customization,
                                  app_name=getattr(params, "app_name", None),
                                  send_from=params.send_from_email_address,
                                  sender_name=params.send_from_email_sender_name,
                                  reply_to=params.reply_to_email_address),
        sms_template=params.sms_customization.template if params.sms_customization else None)
    if ctx.version.result_key == "initOtpResult":
        return {"otpId": row.id}
    bundle = otp_target_bundle(ctx.session, service_keys(ctx.services),
                               organization_id=ctx.organization_id, otp_id=row.id)
    return {"otpId": row.id, "otpEncryptionTargetBundle": bundle}


SPEC = ActivitySpec(
    path="init_otp",
    versions=(
        Version("ACTIVITY_TYPE_INIT_OTP_V3", Params, "initOtpIntentV3", "initOtpResultV2"),
        Version("ACTIVITY_TYPE_INIT_OTP_V2", Params, "initOtpIntentV2", "initOtpResultV2"),
        Version("ACTIVITY_TYPE_INIT_OTP", ParamsV1, "initOtpIntent", "initOtpResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="OTP",
    action="CREATE",
    parent_may_submit=True,
)
