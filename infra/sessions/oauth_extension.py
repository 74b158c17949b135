"""Plugs the OAuth / OIDC half of sessions into shared mechanisms.

* ``infra.wallets.custody.SEALED_TABLES``: OAuth 2.0 client secrets are sealed rows, so
  ``walletd keys rotate`` rewraps them and ``walletd keys status`` counts them;
* ``infra.identity.extension.OIDC_TOKEN_HOOKS``: a sign-up binding an OAuth provider from
  an ``oidcToken`` spends the token's one sign-up (:func:`~infra.sessions.oidc_login.spend_signup`);
* ``infra.sessions.redaction.SECRET_FIELDS``: ID tokens, authorization codes and PKCE
  verifiers are sealed out of stored bodies and intents (the executing worker reveals them);
* ``infra.sessions.attested.SCHEMES``: the ``STAMP_ATTESTED_SCHEME_P256_OIDC`` scheme of
  ``X-Stamp-Attested`` (``infra.sessions.attested_oidc``).
"""

from __future__ import annotations

from infra.db.models.oauth import Oauth2Credential
from infra.identity.extension import OIDC_TOKEN_HOOKS
from infra.sessions import attested_oidc  # noqa: F401  (X-Stamp-Attested OIDC scheme)
from infra.sessions.oidc_login import spend_signup
from infra.sessions.redaction import SECRET_FIELDS
from infra.wallets.custody import SEALED_TABLES

if Oauth2Credential not in SEALED_TABLES:
    SEALED_TABLES.append(Oauth2Credential)
if spend_signup not in OIDC_TOKEN_HOOKS:
    OIDC_TOKEN_HOOKS.append(spend_signup)
SECRET_FIELDS.update({
    "ACTIVITY_TYPE_OAUTH_LOGIN": ("oidcToken",),
    "ACTIVITY_TYPE_OAUTH": ("oidcToken",),
    "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE": ("authCode", "codeVerifier"),
})
