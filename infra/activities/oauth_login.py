"""``oauth_login``: an OIDC token (nonce-bound to ``publicKey``) for a session JWT.

The token's ``(iss, sub, aud)`` names the user through their OAuth providers, in the
organization addressed or one of its sub-organizations (``infra.sessions.oidc_login``);
``publicKey`` becomes an expiring login credential of that user and the result is a session
JWT signed by the notarizer key. A token logs in once.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, CheckContext, Version
from infra.sessions.oauth2 import sealed_room
from infra.sessions.oidc import MAX_TOKEN_LENGTH
from infra.sessions.oidc_login import spend_login, verify_login
from infra.sessions.params import seconds
from infra.sessions.redaction import reveal
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    issue_session_jwt,
    login_grant,
    p256_public_key,
)
from infra.wiremodel import WireModel
from infra.worker_services import service_keys


class Params(WireModel):
    """``v1OauthLoginIntent``."""

    oidc_token: str = Field(min_length=1, max_length=sealed_room(MAX_TOKEN_LENGTH))
    public_key: str = Field(min_length=1, max_length=160)
    expiration_seconds: str | None = None
    invalidate_existing: bool = False
    session_profile_id: str | None = Field(default=None, max_length=64)


def check(params: Params, ctx: CheckContext) -> None:
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    p256_public_key(params.public_key, "publicKey")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    public_key = p256_public_key(params.public_key, "publicKey")
    token = reveal(params.oidc_token, ctx.session, service_keys(ctx.services), "oidcToken")
    login = verify_login(ctx.session, ctx.services.settings, ctx.organization_id, token, params.public_key)
    spend_login(ctx.session, login.identity, ctx.activity.fingerprint, ctx.now)
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    grant = login_grant(ctx, user_id=login.target.user_id,
                        organization_id=login.target.organization_id,
                        public_key_hex=public_key, seconds=ttl,
                        named_profile_id=params.session_profile_id)
    ttl = grant.lifetime(ttl)
    add_login_credential(ctx, user_id=login.target.user_id, public_key_hex=public_key,
                         expiration_seconds=ttl,
                         invalidate_existing=params.invalidate_existing,
                         name=f"OAuth Login - {ctx.now.isoformat()}", grant=grant)
    profile = grant.profile
    session_jwt = issue_session_jwt(
        service_keys(ctx.services), user_id=login.target.user_id,
        organization_id=login.target.organization_id, public_key_hex=public_key,
        session_type=profile.name if profile else "SESSION_TYPE_READ_WRITE",
        expiration_seconds=ttl, now=ctx.now, session=ctx.session,
        session_profile_id=grant.profile_id)
    return {"session": session_jwt}


SPEC = login_spec(
    "oauth_login",
    Version("ACTIVITY_TYPE_OAUTH_LOGIN", Params, "oauthLoginIntent", "oauthLoginResult"),
    execute=execute,
    check=check,
)
