"""``oauth2_authenticate``: an authorization code of an OAuth 2.0-only provider for an ID token.

For X and Discord, which issue no ID tokens (``infra.sessions.oauth2``): the worker exchanges
``authCode`` with PKCE (``codeVerifier``) at the provider's token endpoint with the client id
and secret of ``oauth2CredentialId`` (registered in this organization or its parent), asks the
provider who the user is, and returns an ID token walletd issues (``sub`` =
``<provider>:<user id>``, ``aud`` = the client id, ``nonce`` echoed) for ``oauth_login``,
``oauth``, ``X-Stamp-Attested`` or a sign-up's ``oauthProviders``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.logins import login_spec
from infra.activities.spec import ActivityContext, Version
from infra.errors import InvalidRequest
from infra.identity.ancestry import organization_chain
from infra.sessions.egress import Egress
from infra.sessions.oauth2 import (
    VERIFIER_LENGTH,
    endpoints,
    exchange_code,
    find_credential,
    issue_id_token,
    provider_user_id,
    sealed_room,
)
from infra.sessions.redaction import reveal
from infra.wiremodel import WireModel
from infra.worker_services import custody_of, service_keys


class Params(WireModel):
    """``v1Oauth2AuthenticateIntent``."""

    oauth2_credential_id: str = Field(min_length=1, max_length=64)
    auth_code: str = Field(min_length=1, max_length=sealed_room(2048))
    redirect_uri: str = Field(min_length=1, max_length=2048)
    code_verifier: str = Field(min_length=VERIFIER_LENGTH[0],
                               max_length=sealed_room(VERIFIER_LENGTH[1]))
    nonce: str = Field(min_length=1, max_length=256)
    bearer_token_target_public_key: str | None = Field(default=None, max_length=160)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    settings = ctx.services.settings
    row = find_credential(ctx.session, organization_chain(ctx.session, ctx.organization_id),
                          params.oauth2_credential_id)
    secret = custody_of(ctx.services).open_row(row)
    token_url, userinfo_url = endpoints(settings, row.provider)
    egress = Egress.from_settings(settings)
    keys = service_keys(ctx.services)
    code = reveal(params.auth_code, ctx.session, keys, "authCode")
    verifier = reveal(params.code_verifier, ctx.session, keys, "codeVerifier")
    if not VERIFIER_LENGTH[0] <= len(verifier) <= VERIFIER_LENGTH[1] or len(code) > 2048:
        raise InvalidRequest("codeVerifier must be 43 to 128 characters and authCode at most 2048",
                             field="codeVerifier")
    access_token = exchange_code(egress, token_url, client_id=row.client_id, client_secret=secret,
                                 code=code, redirect_uri=params.redirect_uri,
                                 code_verifier=verifier)
    user_id = provider_user_id(egress, userinfo_url, row.provider, access_token)
    token = issue_id_token(keys, ctx.session, settings,
                           provider=row.provider, user_id=user_id, client_id=row.client_id,
                           nonce=params.nonce, now=ctx.now, bearer_token=access_token,
                           bearer_token_target_public_key=params.bearer_token_target_public_key)
    return {"oidcToken": token}


SPEC = login_spec(
    "oauth2_authenticate",
    Version("ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", Params, "oauth2AuthenticateIntent",
            "oauth2AuthenticateResult"),
    execute=execute,
)
