"""OAuth 2.0-only providers (X, Discord): client credentials and the code exchange.

Such providers issue no ID tokens, so walletd plays "OIDC wrapper" as Turnkey does
(``oauth2_authenticate``): it exchanges the authorization code with PKCE at the provider's
token endpoint using the organization's registered client id and secret, asks the provider
who the user is, and issues a short-lived ID token of its own (``iss`` = walletd's base URL,
``sub`` = ``<provider>:<user id>``, ``aud`` = the client id, ``nonce`` echoed), signed ES256
by the verification-token service key. ``oauth_login`` / ``oauth`` / ``X-Stamp-Attested``
then verify it like any other ID token (:class:`~infra.sessions.oidc.SelfIssuer`).

Client secrets arrive encrypted to the service's encryption key
(``encryptOauth2ClientSecret``, :mod:`infra.crypto.quorum`) and are kept sealed under the
master key (:class:`~infra.db.models.oauth.Oauth2Credential`); only workers open them.
Endpoints default to the providers' public ones and can be pointed elsewhere with
``WALLETD_OAUTH2_<PROVIDER>_{TOKEN,USERINFO}_URL``.
"""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

import jwt
from sqlalchemy.orm import Session

from infra.clock import wire_timestamp
from infra.crypto import quorum
from infra.crypto.bundles import encrypt_to_bundle
from infra.db.models.oauth import Oauth2Credential
from infra.errors import InvalidRequest, NotFound, Unauthenticated
from infra.sessions.egress import Egress, UpstreamUnavailable
from infra.sessions.oidc import SelfIssuer
from infra.sessions.service_keys import ENCRYPTION, VERIFICATION_TOKEN, verifying_keys

Oauth2ProviderName = Literal["OAUTH2_PROVIDER_X", "OAUTH2_PROVIDER_DISCORD"]
#: How long an ID token walletd issues stays valid.
ISSUED_TOKEN_SECONDS: Final = 600
MAX_SECRET_ENVELOPE_LENGTH: Final = 2 * (quorum.MAX_MESSAGE_LENGTH + 200)
#: PKCE code verifier length (RFC 7636).
VERIFIER_LENGTH: Final = (43, 128)


def sealed_room(length: int) -> int:
    """The longest stored form of a field of ``length`` characters that the activity tables
    keep sealed (``infra.sessions.redaction``: hex HPKE JSON behind a prefix); the clear value
    is checked against ``length`` once revealed."""
    return 2 * length + 512


@dataclass(frozen=True)
class Provider:
    """One OAuth 2.0-only provider.

    Attributes:
        prefix: Prefix of the ``sub`` walletd issues (``x:123``).
        setting: ``WALLETD_OAUTH2_<setting>_{TOKEN,USERINFO}_URL``.
        token_url / userinfo_url: The public endpoints.
        user_id: Reads the user id out of the user endpoint's JSON.
    """

    prefix: str
    setting: str
    token_url: str
    userinfo_url: str
    user_id: Callable[[Any], Any]


def _x_user(doc: Any) -> Any:
    data = doc.get("data") if isinstance(doc, dict) else None
    return data.get("id") if isinstance(data, dict) else None


def _discord_user(doc: Any) -> Any:
    return doc.get("id") if isinstance(doc, dict) else None


PROVIDERS: Final[dict[str, Provider]] = {
    "OAUTH2_PROVIDER_X": Provider("x", "X", "https://api.x.com/2/oauth2/token",
                                  "https://api.x.com/2/users/me", _x_user),
    "OAUTH2_PROVIDER_DISCORD": Provider("discord", "DISCORD", "https://discord.com/api/oauth2/token",
                                        "https://discord.com/api/users/@me", _discord_user),
}


def endpoints(settings: Any, provider: str) -> tuple[str, str]:
    """``(token URL, user URL)`` of ``provider`` after the settings' overrides."""
    spec = PROVIDERS[provider]
    overrides = dict(getattr(settings, "oauth2_endpoints", ()) or ())
    return (overrides.get(f"{spec.setting}_TOKEN_URL", spec.token_url),
            overrides.get(f"{spec.setting}_USERINFO_URL", spec.userinfo_url))


# --- credentials ---------------------------------------------------------------------------


def open_client_secret(keys: Any, session: Session, encrypted_client_secret: str) -> bytes:
    """Decrypt an ``encryptedClientSecret`` with the live encryption key versions.

    Raises:
        InvalidRequest: it opens with none of them.
    """
    if len(encrypted_client_secret) > MAX_SECRET_ENVELOPE_LENGTH:
        raise InvalidRequest("encryptedClientSecret is too long", field="encryptedClientSecret")
    for pair in keys.live(session, ENCRYPTION):
        try:
            secret = quorum.decrypt(pair.private_key, encrypted_client_secret)
        except quorum.QuorumDecryptError:
            continue
        if secret:
            return secret
    raise InvalidRequest(
        "encryptedClientSecret does not decrypt with the service's encryption key: encrypt the "
        "client secret with @turnkey/crypto encryptOauth2ClientSecret(secret, <encryptionPublicKey "
        "from GET /public/v1/discovery/keys>)", field="encryptedClientSecret")


def store_credential(custody: Any, row: Oauth2Credential, encrypted_client_secret: str,
                     secret: bytes) -> None:
    """Keep the envelope as sent and seal the secret under the master key."""
    row.encrypted_client_secret = encrypted_client_secret
    custody.seal_row(row, secret)


def find_credential(session: Session, organization_ids: list[str], credential_id: str
                    ) -> Oauth2Credential:
    """The credential ``credential_id`` of one of ``organization_ids``, or a 404."""
    row = session.get(Oauth2Credential, credential_id)
    if row is None or row.organization_id not in organization_ids:
        raise NotFound(f"OAuth 2.0 credential not found: {credential_id}")
    return row


def render_credential(row: Oauth2Credential) -> dict[str, Any]:
    """``v1Oauth2Credential`` (the secret only as the envelope the client sent)."""
    return {
        "oauth2CredentialId": row.id,
        "organizationId": row.organization_id,
        "provider": row.provider,
        "clientId": row.client_id,
        "encryptedClientSecret": row.encrypted_client_secret,
        "createdAt": wire_timestamp(row.created_at),
        "updatedAt": wire_timestamp(row.updated_at),
    }


# --- the code exchange ---------------------------------------------------------------------


def exchange_code(egress: Egress, token_url: str, *, client_id: str, client_secret: bytes,
                  code: str, redirect_uri: str, code_verifier: str) -> str:
    """Trade an authorization code (PKCE) for an access token.

    Raises:
        Unauthenticated: the provider refused the code, verifier or client (4xx).
        UpstreamUnavailable: the provider could not be reached or answered unusably.
    """
    basic = base64.b64encode(
        f"{urllib.parse.quote(client_id, safe='')}:"
        f"{urllib.parse.quote(client_secret.decode('utf-8', 'replace'), safe='')}".encode()
    ).decode()
    answer = egress.request(
        "POST", token_url, "the OAuth 2.0 token endpoint",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
              "code_verifier": code_verifier, "client_id": client_id},
        headers={"Authorization": f"Basic {basic}"})
    if 400 <= answer.status < 500:
        raise Unauthenticated(
            "the OAuth 2.0 provider refused the authorization code (it may be used, expired, or "
            "the codeVerifier / redirectUri / client credential does not match)")
    doc = answer.json("the OAuth 2.0 token endpoint") if answer.status == 200 else None
    token = doc.get("access_token") if isinstance(doc, dict) else None
    if not isinstance(token, str) or not token:
        raise UpstreamUnavailable(
            f"the OAuth 2.0 token endpoint gave no access token (HTTP {answer.status})")
    return token


def provider_user_id(egress: Egress, userinfo_url: str, provider: str, access_token: str) -> str:
    """The provider's id of the user the access token belongs to.

    Raises:
        UpstreamUnavailable: the user endpoint answered without an id.
    """
    answer = egress.request("GET", userinfo_url, "the OAuth 2.0 user endpoint",
                            headers={"Authorization": f"Bearer {access_token}"})
    doc = answer.json("the OAuth 2.0 user endpoint") if answer.status == 200 else None
    user_id = PROVIDERS[provider].user_id(doc)
    if not isinstance(user_id, str | int) or isinstance(user_id, bool) or not str(user_id):
        raise UpstreamUnavailable(
            f"the OAuth 2.0 user endpoint gave no user id (HTTP {answer.status})")
    return str(user_id)


# --- walletd as an issuer ------------------------------------------------------------------


def self_issuer(settings: Any, session: Session) -> SelfIssuer:
    """walletd's own issuer: its base URL, verified with the verification-token keys."""
    return SelfIssuer(settings.effective_base_url,
                      lambda: verifying_keys(session, VERIFICATION_TOKEN))


def issue_id_token(keys: Any, session: Session, settings: Any, *, provider: str, user_id: str,
                   client_id: str, nonce: str, now: datetime,
                   bearer_token: str | None = None,
                   bearer_token_target_public_key: str | None = None) -> str:
    """An ES256 ID token for the provider's user, signed by the verification-token key.

    With ``bearer_token_target_public_key`` the provider's access token is HPKE-encrypted to
    that key (credential-bundle format) and carried in ``encrypted_bearer_token``.
    """
    pair = keys.current(session, VERIFICATION_TOKEN)
    claims: dict[str, Any] = {
        "iss": settings.effective_base_url,
        "sub": f"{PROVIDERS[provider].prefix}:{user_id}",
        "aud": client_id,
        "nonce": nonce,
        "iat": int(now.timestamp()),
        "exp": int((now + timedelta(seconds=ISSUED_TOKEN_SECONDS)).timestamp()),
    }
    if bearer_token_target_public_key and bearer_token:
        claims["encrypted_bearer_token"] = encrypt_to_bundle(
            bearer_token.encode(), bearer_token_target_public_key)
    return jwt.encode(claims, pair.private_key, algorithm="ES256",
                      headers={"kid": f"{VERIFICATION_TOKEN}.v{pair.version}"})
