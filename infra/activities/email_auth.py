"""``email_auth`` (V1 to V3): email the user a magic link carrying a credential bundle.

A fresh P-256 key becomes an expiring ``EMAIL_AUTH`` credential of the user named by
``email``; its private half, sealed to ``targetPublicKey``, is the ``%s`` of
``emailCustomization.magicLinkTemplate`` (the bundle alone when there is no template).
"""

from __future__ import annotations

from typing import Any

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, CheckContext, Version
from infra.sessions.credential_bundles import EmailBundleParams, check_email_bundle, email_bundle
from infra.sessions.params import timestamp_name

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256"


class Params(EmailBundleParams):
    """``v1EmailAuthIntent`` / ``V2`` / ``V3``."""

    api_key_name: str | None = None
    invalidate_existing: bool = False


def check(params: Params, ctx: CheckContext) -> None:
    check_email_bundle(params, ctx)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_id, key_id = email_bundle(
        params, ctx, kind="email_auth", credential_type=CREDENTIAL_TYPE,
        name=params.api_key_name or timestamp_name("Email Auth", ctx.now),
        invalidate_existing=params.invalidate_existing)
    return {"userId": user_id, "apiKeyId": key_id}


SPEC = login_spec(
    "email_auth",
    Version("ACTIVITY_TYPE_EMAIL_AUTH_V3", Params, "emailAuthIntentV3", "emailAuthResult"),
    Version("ACTIVITY_TYPE_EMAIL_AUTH_V2", Params, "emailAuthIntentV2", "emailAuthResult"),
    Version("ACTIVITY_TYPE_EMAIL_AUTH", Params, "emailAuthIntent", "emailAuthResult"),
    execute=execute,
    check=check,
)
