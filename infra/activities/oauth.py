"""``oauth``: an OIDC token (nonce-bound to ``targetPublicKey``) for a credential bundle.

The legacy OAuth flow: the token names the user as for ``oauth_login``; a fresh P-256 key
becomes an expiring ``CREDENTIAL_TYPE_OAUTH_KEY_P256`` API key of that user and its private
half is HPKE-encrypted to ``targetPublicKey`` (PROTOCOL.md §5.2, opened by
``decryptCredentialBundle``). A token logs in once.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, CheckContext, Version
from infra.crypto import hpke
from infra.errors import InvalidRequest
from infra.sessions.credential_bundles import issue_bundle
from infra.sessions.oauth2 import sealed_room
from infra.sessions.oidc import MAX_TOKEN_LENGTH
from infra.sessions.oidc_login import spend_login, verify_login
from infra.sessions.params import seconds
from infra.sessions.redaction import reveal
from infra.sessions.tokens import DEFAULT_SESSION_SECONDS
from infra.wiremodel import WireModel
from infra.worker_services import service_keys


class Params(WireModel):
    """``v1OauthIntent``."""

    oidc_token: str = Field(min_length=1, max_length=sealed_room(MAX_TOKEN_LENGTH))
    target_public_key: str = Field(min_length=1, max_length=160)
    api_key_name: str | None = Field(default=None, max_length=256)
    expiration_seconds: str | None = None
    invalidate_existing: bool = False


def check(params: Params, ctx: CheckContext) -> None:
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    try:
        hpke.load_public_key(params.target_public_key)
    except InvalidRequest:
        raise InvalidRequest("targetPublicKey is not a P-256 public key: send the uncompressed "
                             "(04…) key hex of the client's embedded key",
                             field="targetPublicKey") from None


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    token = reveal(params.oidc_token, ctx.session, service_keys(ctx.services), "oidcToken")
    login = verify_login(ctx.session, ctx.services.settings, ctx.organization_id, token,
                         params.target_public_key)
    spend_login(ctx.session, login.identity, ctx.activity.fingerprint, ctx.now)
    issued = issue_bundle(
        ctx, user_id=login.target.user_id, target_public_key=params.target_public_key,
        expiration_seconds=ttl, invalidate_existing=params.invalidate_existing,
        name=params.api_key_name or f"Oauth - {ctx.now.isoformat()}",
        credential_type="CREDENTIAL_TYPE_OAUTH_KEY_P256")
    return {"userId": login.target.user_id, "apiKeyId": issued.api_key_id,
            "credentialBundle": issued.bundle}


SPEC = login_spec(
    "oauth",
    Version("ACTIVITY_TYPE_OAUTH", Params, "oauthIntent", "oauthResult"),
    execute=execute,
    check=check,
)
