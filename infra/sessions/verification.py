"""Verification tokens (PROTOCOL.md §7.3), OTP bundles (§5.5) and client signatures (§7.4).

A verification token is a standard ES256 JWT signed by the service verification-token key:
``{"exp": "<ms>", "id", "organization_id", "verification_type", "contact", "public_key"}``.
The row of the same id counts its uses: one sign-up and one login (``@turnkey/core``'s
``signUpWithOtp`` signs up, then logs in with the same token), never two of the same kind.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

import jwt
from cryptography.exceptions import InvalidSignature as _BadSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from sqlalchemy import or_, update
from sqlalchemy.orm import Session

from infra.audit import leaves as audit
from infra.clock import as_utc
from infra.crypto import hpke
from infra.crypto.bundles import ServiceSigner, build_signed_bundle, open_encrypted_bundle
from infra.db.models.sessions import VerificationToken
from infra.errors import InvalidCiphertext, InvalidRequest, Unauthenticated
from infra.pipeline import store
from infra.sessions.redaction import REDACTED
from infra.sessions.service_keys import ENCRYPTION, VERIFICATION_TOKEN, ServiceKeys, verifying_keys
from infra.sessions.tokens import p256_public_key
from infra.wiremodel import WireModel

Usage = Literal["login", "signup"]
#: ``expirationSeconds`` of a verification token when left out (1 hour) and at most (1 day).
DEFAULT_TOKEN_SECONDS: Final = 3600
MAX_TOKEN_SECONDS: Final = 86400
CLIENT_SIGNATURE_SCHEME: Final = "CLIENT_SIGNATURE_SCHEME_API_P256"
USAGE_TYPE: Final = {"login": "USAGE_TYPE_LOGIN", "signup": "USAGE_TYPE_SIGNUP"}


def issue_token(session: Session, keys: ServiceKeys, *, organization_id: str, otp_id: str,
                verification_type: str, contact: str, public_key: str, seconds: int,
                now: datetime, activity_id: str | None = None) -> str:
    """Store and sign a verification token for a verified code."""
    row = VerificationToken(organization_id=organization_id, otp_id=otp_id,
                            activity_id=activity_id,
                            verification_type=verification_type, contact=contact,
                            public_key=public_key, expires_at=now + timedelta(seconds=seconds))
    session.add(row)
    session.flush()
    claims = {
        "exp": str(int(row.expires_at.timestamp() * 1000)),
        "id": row.id,
        "organization_id": organization_id,
        "verification_type": verification_type,
        "contact": contact,
        "public_key": public_key,
    }
    signer = keys.current(session, VERIFICATION_TOKEN).private_key
    return jwt.encode(claims, signer, algorithm="ES256", headers={"typ": "JWT"})


@dataclass(frozen=True)
class TokenClaims:
    """A verified token's claims."""

    id: str
    organization_id: str
    verification_type: str
    contact: str
    public_key: str


def verify_token(session: Session, token: str, now: datetime) -> TokenClaims:
    """Check the signature (any live key version), expiry and that the service issued it.

    Raises:
        Unauthenticated: bad, expired or unknown token (never echoing it).
    """
    claims: dict[str, Any] | None = None
    for key in verifying_keys(session, VERIFICATION_TOKEN):
        try:
            claims = jwt.decode(token, key, algorithms=["ES256"],
                                options={"verify_exp": False, "verify_aud": False})
            break
        except jwt.InvalidSignatureError:
            continue
        except jwt.PyJWTError:
            raise Unauthenticated("malformed verification token") from None
    if claims is None:
        raise Unauthenticated("verification token signature does not verify")
    try:
        expires_ms = int(str(claims["exp"]))
        parsed = TokenClaims(str(claims["id"]), str(claims["organization_id"]),
                             str(claims["verification_type"]), str(claims["contact"]),
                             str(claims.get("public_key") or ""))
    except (KeyError, ValueError):
        raise Unauthenticated("malformed verification token") from None
    if expires_ms <= int(now.timestamp() * 1000):
        raise Unauthenticated("verification token expired; verify a new code")
    row = session.get(VerificationToken, parsed.id)
    if row is None or as_utc(row.expires_at) <= now:
        raise Unauthenticated("verification token is not known to this service")
    return parsed


def token_usable_in(claims: TokenClaims, chain: list[str]) -> bool:
    """A token is scoped to the issuing organization; a parent's serves its sub-orgs."""
    return claims.organization_id in chain


def check_unbound_spender(session: Session, claims: TokenClaims, submitter_id: str | None) -> None:
    """A token bound to no client key (``verify_otp`` V1 without ``publicKey``) is spent only
    by a user of the organization that verified it: a parent organization, which can read a
    sub-organization's activities, cannot spend the token a sub-organization's user
    received. A bound token is spent with its key's signature instead.

    Raises:
        Unauthenticated: an unbound token submitted from another organization.
    """
    if claims.public_key:
        return
    from infra.db.models.organizations import User

    user = session.get(User, submitter_id) if submitter_id else None
    if user is None or user.organization_id != claims.organization_id:
        raise Unauthenticated("this verification token is bound to no client key: only the "
                              "organization that verified it may spend it (verify with a "
                              "publicKey to use it elsewhere)")


def record_token_use(session: Session, token_id: str, usage: Usage, fingerprint: str,
                     now: datetime) -> None:
    """Spend the token's ``usage`` (an identical re-sent request is the same use).

    Raises:
        Unauthenticated: the token already served another request of this kind.
    """
    used = getattr(VerificationToken, f"{usage}_used_at")
    by = getattr(VerificationToken, f"{usage}_fingerprint")
    changed = session.execute(
        update(VerificationToken)
        .where(VerificationToken.id == token_id, or_(used.is_(None), by == fingerprint))
        .values({used: now, by: fingerprint})
        .returning(VerificationToken.id)
        .execution_options(synchronize_session=False)).first()
    if not changed:
        raise Unauthenticated(f"verification token already used for a {usage}; verify a new code")
    if usage == "login":
        _redact_issuing_result(session, token_id)


def _redact_issuing_result(session: Session, token_id: str) -> None:
    """A spent token no longer rests in the result of the ``verify_otp`` that issued it."""
    row = session.get(VerificationToken, token_id)
    activity = store.read(session, row.activity_id) if row and row.activity_id else None
    if activity is None or not activity.result:
        return
    store.redact(session, activity,
                 lambda redacted: audit.redaction_leaf(redacted, "spent verification token"),
                 result={key: {**body, "verificationToken": REDACTED}
                         for key, body in activity.result.items()})


# --- client signatures (§7.4) ------------------------------------------------------------


class ClientSignature(WireModel):
    """``v1ClientSignature``."""

    public_key: str
    scheme: str
    message: str
    signature: str


def verify_client_signature(signature: ClientSignature, *, token: TokenClaims, usage: Usage,
                            expected: dict[str, Any]) -> None:
    """The token's key signed ``{<usage body>, "tokenId", "type"}`` (raw r‖s over SHA-256).

    ``expected``: the usage body that must match the request (e.g. ``{"login":
    {"publicKey": ...}}``).

    Raises:
        Unauthenticated: wrong key, scheme, message or signature.
    """
    if signature.scheme != CLIENT_SIGNATURE_SCHEME:
        raise Unauthenticated(f"clientSignature.scheme must be {CLIENT_SIGNATURE_SCHEME}")
    key_hex = p256_public_key(signature.public_key, "clientSignature.publicKey")
    if not token.public_key or key_hex != p256_public_key(token.public_key, "publicKey"):
        raise Unauthenticated("clientSignature.publicKey is not the key the token was issued to")
    try:
        raw = bytes.fromhex(signature.signature)
        message = json.loads(signature.message)
    except ValueError:
        raise Unauthenticated("clientSignature must carry a JSON message and a hex signature") \
            from None
    if len(raw) != 64 or not isinstance(message, dict):
        raise Unauthenticated("clientSignature.signature must be the raw 64-byte r‖s hex")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        hpke.load_public_key(key_hex).verify(der, signature.message.encode("utf-8"),
                                             ec.ECDSA(hashes.SHA256()))
    except _BadSignature:
        raise Unauthenticated("clientSignature does not verify") from None
    if message.get("tokenId") != token.id or message.get("type") != USAGE_TYPE[usage]:
        raise Unauthenticated(f"clientSignature must sign tokenId and type {USAGE_TYPE[usage]}")
    for key, value in expected.items():
        if message.get(key) != value:
            raise Unauthenticated(f"clientSignature.message {key} does not match the request")


def fingerprint_of(body: bytes) -> str:
    """``sha256:<hex>`` of a request body (a use of a token by that request)."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


# --- OTP bundles (§5.5) ------------------------------------------------------------------


def otp_target_bundle(session: Session, keys: ServiceKeys, *, organization_id: str,
                      otp_id: str) -> str:
    """``otpEncryptionTargetBundle``: the encryption key, signed by the verification-token key."""
    signer = ServiceSigner(keys.current(session, VERIFICATION_TOKEN).private_key)
    target = keys.current(session, ENCRYPTION).public_key_hex
    return build_signed_bundle(signer, {"organizationId": organization_id, "otpId": otp_id,
                                        "targetPublic": target})


def open_otp_bundle(session: Session, keys: ServiceKeys, encrypted: str) -> tuple[str, str]:
    """Decrypt ``encryptedOtpBundle`` → ``(otp_code, public_key)`` (any live key version).

    Raises:
        InvalidRequest: not a bundle sealed to the service's encryption key.
    """
    for pair in keys.live(session, ENCRYPTION):
        try:
            plain = open_encrypted_bundle(encrypted, pair.private_key)
        except InvalidCiphertext as ex:
            if "JSON" in ex.message:
                raise InvalidRequest(ex.message, field="encryptedOtpBundle") from None
            continue
        try:
            doc = json.loads(plain)
            return str(doc["otp_code"]), str(doc.get("public_key") or "")
        except (ValueError, KeyError, TypeError):
            break
    raise InvalidRequest("encryptedOtpBundle must be encryptOtpCodeToBundle's output for the "
                         "otpEncryptionTargetBundle of this otpId", field="encryptedOtpBundle")
