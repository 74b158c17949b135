"""``init_otp_auth`` (V1 to V3): send a one-time code to an existing user's email or phone."""

from __future__ import annotations

from typing import Any

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, CheckContext, Version
from infra.sessions import otp
from infra.sessions.delivery import check_sms_template
from infra.sessions.flows import send_code
from infra.sessions.params import (
    EmailCustomizationParams,
    OtpType,
    SmsCustomizationParams,
    email_customization,
    normalize_contact,
)
from infra.sessions.tokens import resolve_login_user
from infra.wiremodel import WireModel

#: The first version sent 6-digit numeric codes.
V1_LENGTH = 6


class ParamsV1(WireModel):
    """``v1InitOtpAuthIntent``."""

    otp_type: OtpType
    contact: str
    email_customization: EmailCustomizationParams | None = None
    sms_customization: SmsCustomizationParams | None = None
    user_identifier: str | None = None
    send_from_email_address: str | None = None
    send_from_email_sender_name: str | None = None
    reply_to_email_address: str | None = None


class ParamsV2(ParamsV1):
    """``v1InitOtpAuthIntentV2``."""

    otp_length: int | None = None
    alphanumeric: bool | None = None


class Params(ParamsV2):
    """``v1InitOtpAuthIntentV3``."""

    app_name: str
    expiration_seconds: str | None = None


def _shape(params: ParamsV1) -> tuple[int, bool, int]:
    if isinstance(params, ParamsV2):
        length = otp.validated_length(params.otp_length, otp.DEFAULT_LENGTH)
        alphanumeric = True if params.alphanumeric is None else params.alphanumeric
    else:
        length, alphanumeric = V1_LENGTH, False
    expiration = otp.validated_expiration(getattr(params, "expiration_seconds", None))
    return length, alphanumeric, expiration


def _user(params: ParamsV1, session: Any, organization_id: str) -> Any:
    contact = normalize_contact(params.otp_type, params.contact)
    if params.otp_type == "OTP_TYPE_EMAIL":
        return contact, resolve_login_user(session, organization_id, email=contact)
    return contact, resolve_login_user(session, organization_id, phone_number=contact)


def check(params: ParamsV1, ctx: CheckContext) -> None:
    _shape(params)
    if params.otp_type == "OTP_TYPE_SMS":
        check_sms_template(params.sms_customization.template if params.sms_customization
                           else None)
    email_customization(params.email_customization)
    _user(params, ctx.session, ctx.organization_id)


def execute(params: ParamsV1, ctx: ActivityContext) -> dict[str, Any]:
    length, alphanumeric, expiration = _shape(params)
    contact, target = _user(params, ctx.session, ctx.organization_id)
    row = send_code(
        ctx, purpose="otp_auth", otp_type=params.otp_type, contact=contact,
        user_id=target.user_id, organization_id=target.organization_id, length=length,
        alphanumeric=alphanumeric, expiration_seconds=expiration,
        email=email_customization(params.email_customization,
                                  app_name=getattr(params, "app_name", None),
                                  send_from=params.send_from_email_address,
                                  sender_name=params.send_from_email_sender_name,
                                  reply_to=params.reply_to_email_address),
        sms_template=params.sms_customization.template if params.sms_customization else None)
    return {"otpId": row.id}


SPEC = login_spec(
    "init_otp_auth",
    Version("ACTIVITY_TYPE_INIT_OTP_AUTH_V3", Params, "initOtpAuthIntentV3",
            "initOtpAuthResultV2"),
    Version("ACTIVITY_TYPE_INIT_OTP_AUTH_V2", ParamsV2, "initOtpAuthIntentV2",
            "initOtpAuthResultV2"),
    Version("ACTIVITY_TYPE_INIT_OTP_AUTH", ParamsV1, "initOtpAuthIntent",
            "initOtpAuthResult"),
    execute=execute,
    check=check,
)
