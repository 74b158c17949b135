"""Sign-up with a verification token: the proxy's own check before it forwards.

A browser signs up with an email or phone number only with the verification token that a
verified one-time code produced for that contact, and with the client signature of the key
the token is bound to (PROTOCOL.md §7.3, §7.4): otherwise anyone could create an account
for someone else's address and later receive their logins. The token's signature is
checked against the service's ``verificationTokenPublicKey`` (discovery); the client
signature with ``infra.sessions.verification.verify_client_signature``. Spending the token
(one sign-up) is the API's part.
"""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
import requests

from infra.crypto import hpke
from infra.errors import InvalidRequest, Unauthenticated, Unavailable
from infra.sessions.verification import ClientSignature, TokenClaims, verify_client_signature

#: How long the discovery key is kept (seconds).
KEY_TTL_S = 300.0
_USAGE_FIELDS = {"email": "userEmail", "phoneNumber": "userPhoneNumber", "apiKeys": "apiKeys",
                 "authenticators": "authenticators", "oauthProviders": "oauthProviders"}


class TokenKeys:
    """The service's verification-token public key, read from ``/public/v1/discovery/keys``."""

    def __init__(self, api_url: str) -> None:
        self.api_url = api_url.rstrip("/")
        self._key: tuple[float, str] | None = None

    def current(self) -> str:
        if self._key and time.monotonic() - self._key[0] < KEY_TTL_S:
            return self._key[1]
        try:
            keys = requests.get(f"{self.api_url}/public/v1/discovery/keys", timeout=10).json()
            key = str(keys["verificationTokenPublicKey"])
        except (requests.RequestException, ValueError, KeyError) as ex:
            raise Unavailable("the auth proxy cannot read the service keys; retry shortly") from ex
        self._key = (time.monotonic(), key)
        return key


def verified_claims(keys: TokenKeys, token: str) -> TokenClaims:
    """The claims of a verification token the service signed and that has not expired.

    Raises:
        Unauthenticated: a forged or expired token.
    """
    try:
        claims = jwt.decode(token, hpke.load_public_key(keys.current()), algorithms=["ES256"],
                            options={"verify_exp": False, "verify_aud": False})
        parsed = TokenClaims(str(claims["id"]), str(claims["organization_id"]),
                             str(claims["verification_type"]), str(claims["contact"]),
                             str(claims.get("public_key") or ""))
        expires_ms = int(str(claims["exp"]))
    except (jwt.PyJWTError, KeyError, ValueError):
        raise Unauthenticated("verification token does not verify; verify a new code") from None
    if expires_ms <= time.time() * 1000:
        raise Unauthenticated("verification token expired; verify a new code")
    return parsed


def check_signup(keys: TokenKeys, body: dict[str, Any], token: str,
                 signature: dict[str, Any]) -> None:
    """The token was issued for the request's contact, and its key signed this sign-up.

    Raises:
        Unauthenticated: a forged, expired or foreign token, or a signature that does not
            cover this request.
    """
    parsed = verified_claims(keys, token)
    contact = body.get("userEmail") if parsed.verification_type == "OTP_TYPE_EMAIL" else (
        body.get("userPhoneNumber"))
    if not isinstance(contact, str) or contact.strip().lower() != parsed.contact.lower():
        raise Unauthenticated("the verification token was issued for another contact than "
                              "the one signing up")
    try:
        client_signature = ClientSignature.model_validate(signature)
        message = json.loads(client_signature.message)
    except ValueError:
        raise InvalidRequest("clientSignature must be {publicKey, scheme, message, signature}",
                             field="clientSignature") from None
    usage = (message.get("signupV2") or message.get("signup")) if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        raise Unauthenticated("clientSignature.message must carry the sign-up (signupV2)")
    verify_client_signature(client_signature, token=parsed, usage="signup", expected={})
    for name, field in _USAGE_FIELDS.items():
        if name in usage and usage[name] != body.get(field):
            raise Unauthenticated(f"clientSignature.message {name} does not match the request")
    for name in ("email", "phoneNumber"):
        if body.get(_USAGE_FIELDS[name]) and name not in usage:
            raise Unauthenticated(f"clientSignature.message must sign the {name} signing up")
