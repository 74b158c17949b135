"""``init_user_email_recovery`` (V1, V2): email a recovery credential bundle.

A fresh P-256 key becomes an expiring ``RECOVER_USER`` credential of the user named by
``email``, emailed sealed to ``targetPublicKey``; stamped with it, ``recover_user`` adds the
user's new passkey.
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

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_RECOVER_USER_KEY_P256"


class Params(WireModel):
    """``v1InitUserEmailRecoveryIntent`` / ``V2``."""

    email: str
    target_public_key: str
    expiration_seconds: str | None = None
    email_customization: EmailCustomizationParams | None = None
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
    add_login_credential(ctx, user_id=user.id, public_key_hex=public_key, expiration_seconds=ttl,
                         invalidate_existing=False,
                         name=timestamp_name("Recovery", ctx.now),
                         credential_type=CREDENTIAL_TYPE)
    custom = email_customization(params.email_customization,
                                 send_from=params.send_from_email_address,
                                 sender_name=params.send_from_email_sender_name,
                                 reply_to=params.reply_to_email_address)
    send_link(ctx, kind="recovery", user=user, email=custom, expiration_seconds=ttl,
              bundle=credential_bundle(params.target_public_key, private_key))
    return {"userId": user.id}


SPEC = ActivitySpec(
    path="init_user_email_recovery",
    versions=(
        Version("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2", Params,
                "initUserEmailRecoveryIntentV2", "initUserEmailRecoveryResult"),
        Version("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY", Params,
                "initUserEmailRecoveryIntent", "initUserEmailRecoveryResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="RECOVERY",
    action="CREATE",
    parent_may_submit=True,
)

