"""``otp_login`` (V1, V2): a verification token and the client's signature buy a session.

The token must verify, be unexpired and serve this organization (or be its parent's); the
client signature (PROTOCOL.md §7.4) must be by the token's key over ``{"login": {"publicKey":
<session key>}, "tokenId", "type": "USAGE_TYPE_LOGIN"}`` (V2 requires it; V1 requires it when
the token is bound to a key). The token's one login is spent; the contact's user (in this
organization or one of its sub-organizations) gets the session.
"""

from __future__ import annotations

from typing import Any

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, CheckContext, Version
from infra.errors import Unauthenticated
from infra.sessions.params import chain_of, seconds, timestamp_name
from infra.sessions.redaction import reveal
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    issue_session_jwt,
    login_grant,
    p256_public_key,
    resolve_login_user,
)
from infra.sessions.verification import (
    ClientSignature,
    check_unbound_spender,
    record_token_use,
    token_usable_in,
    verify_client_signature,
    verify_token,
)
from infra.wiremodel import WireModel
from infra.worker_services import service_keys


class ParamsV1(WireModel):
    """``v1OtpLoginIntent``."""

    verification_token: str
    public_key: str
    expiration_seconds: str | None = None
    invalidate_existing: bool = False
    client_signature: ClientSignature | None = None
    session_profile_id: str | None = None


class Params(ParamsV1):
    """``v1OtpLoginIntentV2`` (``clientSignature`` required)."""

    client_signature: ClientSignature


def check(params: ParamsV1, ctx: CheckContext) -> None:
    p256_public_key(params.public_key, "publicKey")
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)


def execute(params: ParamsV1, ctx: ActivityContext) -> dict[str, Any]:
    token_text = reveal(params.verification_token, ctx.session, service_keys(ctx.services),
                        "verificationToken")
    claims = verify_token(ctx.session, token_text, ctx.now)
    if not token_usable_in(claims, chain_of(ctx.session, ctx.organization_id)):
        raise Unauthenticated("verification token was issued for another organization")
    check_unbound_spender(ctx.session, claims, ctx.user_id)
    public_key = p256_public_key(params.public_key, "publicKey")
    if params.client_signature is not None or claims.public_key:
        if params.client_signature is None:
            raise Unauthenticated("clientSignature is required: the verification token is bound "
                                  "to a client key")
        verify_client_signature(params.client_signature, token=claims, usage="login",
                                expected={"login": {"publicKey": params.public_key}})
    if claims.verification_type == "OTP_TYPE_EMAIL":
        target = resolve_login_user(ctx.session, ctx.organization_id, email=claims.contact)
    else:
        target = resolve_login_user(ctx.session, ctx.organization_id,
                                    phone_number=claims.contact)
    record_token_use(ctx.session, claims.id, "login", ctx.activity.fingerprint, ctx.now)
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    grant = login_grant(ctx, user_id=target.user_id, organization_id=target.organization_id,
                        public_key_hex=public_key, seconds=ttl,
                        named_profile_id=params.session_profile_id)
    ttl = grant.lifetime(ttl)
    add_login_credential(ctx, user_id=target.user_id, public_key_hex=public_key,
                         expiration_seconds=ttl, invalidate_existing=params.invalidate_existing,
                         name=timestamp_name("Login", ctx.now), grant=grant)
    profile = grant.profile
    session = issue_session_jwt(service_keys(ctx.services), user_id=target.user_id,
                                organization_id=target.organization_id, public_key_hex=public_key,
                                session_type=profile.name if profile else "SESSION_TYPE_READ_WRITE",
                                expiration_seconds=ttl, now=ctx.now, session=ctx.session,
                                session_profile_id=grant.profile_id)
    return {"session": session}


SPEC = login_spec(
    "otp_login",
    Version("ACTIVITY_TYPE_OTP_LOGIN_V2", Params, "otpLoginIntentV2", "otpLoginResult"),
    Version("ACTIVITY_TYPE_OTP_LOGIN", ParamsV1, "otpLoginIntent", "otpLoginResult"),
    execute=execute,
    check=check,
)
