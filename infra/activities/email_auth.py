"""``email_auth`` (V1 to V3): email the user a magic link carrying a credential bundle.

A fresh P-256 key becomes an expiring ``EMAIL_AUTH`` credential of the user named by
``email``; its private half, sealed to ``targetPublicKey``, is the ``%s`` of
``emailCustomization.magicLinkTemplate`` (the bundle alone when there is no template).
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import User
from infra.messaging import queues
from infra.sessions.channels import check_channel
from infra.sessions.flows import send_link
from infra.sessions.params import (
    EmailCustomizationParams,
    email_customization,
    normalize_contact,
    seconds,
    timestamp_name,
)
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    credential_bundle,
    new_session_key,
    resolve_login_user,
)
from infra.wiremodel import WireModel

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256"


class Params(WireModel):
    """``v1EmailAuthIntent`` / ``V2`` / ``V3``."""

    email: str
    target_public_key: str
    api_key_name: str | None = None
    expiration_seconds: str | None = None
    email_customization: EmailCustomizationParams | None = None
    invalidate_existing: bool = False
    send_from_email_address: str | None = None
    send_from_email_sender_name: str | None = None
    reply_to_email_address: str | None = None


def check(params: Params, ctx: CheckContext) -> None:
    check_channel(ctx.session, ctx.organization_id, ctx.user_id, params)
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    credential_bundle(params.target_public_key, b"\x01" * 32)
    email_customization(params.email_customization)
    resolve_login_user(ctx.session, ctx.organization_id,
                       email=normalize_contact("OTP_TYPE_EMAIL", params.email))


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    check_channel(ctx.session, ctx.organization_id, ctx.user_id, params,
                  settings=ctx.services.settings)
    target = resolve_login_user(ctx.session, ctx.organization_id,
                                email=normalize_contact("OTP_TYPE_EMAIL", params.email))
    user = ctx.session.get(User, target.user_id)
    assert user is not None
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    public_key, private_key = new_session_key()
    key_id = add_login_credential(
        ctx, user_id=user.id, public_key_hex=public_key, expiration_seconds=ttl,
        invalidate_existing=params.invalidate_existing,
        name=params.api_key_name or timestamp_name("Email Auth", ctx.now),
        credential_type=CREDENTIAL_TYPE)
    custom = email_customization(params.email_customization,
                                 send_from=params.send_from_email_address,
                                 sender_name=params.send_from_email_sender_name,
                                 reply_to=params.reply_to_email_address)
    send_link(ctx, kind="email_auth", user=user, email=custom, expiration_seconds=ttl,
              bundle=credential_bundle(params.target_public_key, private_key))
    return {"userId": user.id, "apiKeyId": key_id}


SPEC = ActivitySpec(
    path="email_auth",
    versions=(
        Version("ACTIVITY_TYPE_EMAIL_AUTH_V3", Params, "emailAuthIntentV3", "emailAuthResult"),
        Version("ACTIVITY_TYPE_EMAIL_AUTH_V2", Params, "emailAuthIntentV2", "emailAuthResult"),
        Version("ACTIVITY_TYPE_EMAIL_AUTH", Params, "emailAuthIntent", "emailAuthResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="AUTH",
    action="CREATE",
    parent_may_submit=True,
)
