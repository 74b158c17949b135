"""What every login hands out: session JWTs, login credentials, credential bundles.

Shared by the OTP/email activities (this package) and the OAuth/OIDC ones: see the package
docstring for who owns what.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from bip_utils import Base58Encoder
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from infra.crypto import hpke
from infra.crypto.stamp import normalize_public_key
from infra.db.models.identity import OauthProvider
from infra.db.models.organizations import ApiKey, Organization, User
from infra.errors import AlreadyExists, InvalidRequest, NotFound, Unauthenticated
from infra.identity.credentials import ApiKeyParams, add_api_key
from infra.sessions.service_keys import NOTARIZER, ServiceKeys

SessionType = Literal["SESSION_TYPE_READ_WRITE", "SESSION_TYPE_READ_ONLY"]

#: ``expirationSeconds`` of a login when the request leaves it out (PROTOCOL.md §10).
DEFAULT_SESSION_SECONDS: Final = 900
#: Credential types a login creates; ``invalidateExisting`` removes the user's other ones.
LOGIN_CREDENTIAL_TYPES: Final = frozenset({
    "CREDENTIAL_TYPE_LOGIN",
    "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256",
    "CREDENTIAL_TYPE_OTP_AUTH_KEY_P256",
    "CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256",
    "CREDENTIAL_TYPE_OAUTH_KEY_P256",
    "CREDENTIAL_TYPE_RECOVER_USER_KEY_P256",
})


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _raw_signature(der: bytes) -> bytes:
    r, s = decode_dss_signature(der)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def _jwt_signing_input(claims: dict[str, Any]) -> bytes:
    header = _b64url(json.dumps({"alg": "ES256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}".encode("ascii")


def sign_session_jwt(private_key: ec.EllipticCurvePrivateKey, claims: dict[str, Any]) -> str:
    """An ES256 JWT signed over SHA-256(SHA-256(header.payload)) (PROTOCOL.md §6)."""
    signing_input = _jwt_signing_input(claims)
    der = private_key.sign(hashlib.sha256(signing_input).digest(), ec.ECDSA(hashes.SHA256()))
    return f"{signing_input.decode()}.{_b64url(_raw_signature(der))}"


def issue_session_jwt(keys: ServiceKeys, *, user_id: str, organization_id: str,
                      public_key_hex: str, session_type: SessionType, expiration_seconds: int,
                      now: datetime, session: Session) -> str:
    """The ``session`` JWT of a login, signed by the current notarizer key (workers only).

    Claims in Turnkey's order: ``exp`` (seconds), ``public_key`` (compressed hex, as stamped),
    ``session_type``, ``user_id``, ``organization_id`` (the user's own organization).
    """
    claims = {
        "exp": int(now.timestamp()) + int(expiration_seconds),
        "public_key": public_key_hex,
        "session_type": session_type,
        "user_id": user_id,
        "organization_id": organization_id,
    }
    return sign_session_jwt(keys.current(session, NOTARIZER).private_key, claims)


def p256_public_key(public_key_hex: str, field: str) -> str:
    """A client P-256 key in its stamping form (compressed hex), or a 400 saying what to send."""
    try:
        return normalize_public_key("API_KEY_CURVE_P256", public_key_hex)
    except ValueError:
        raise InvalidRequest(
            f"{field} is not a P-256 public key: send the compressed (33-byte, 02/03…) or "
            "uncompressed (04…) SEC1 key hex", field=field) from None


def add_login_credential(ctx: Any, *, user_id: str, public_key_hex: str, expiration_seconds: int,
                         invalidate_existing: bool, name: str,
                         credential_type: str = "CREDENTIAL_TYPE_LOGIN") -> str:
    """Register ``public_key_hex`` as an expiring P-256 API key of ``user_id``; its id.

    The key lives in the user's own organization. Expiring keys count toward the per-user
    limit, and the oldest expiring one is evicted to make room (``infra.identity.quotas``).
    ``invalidate_existing`` first deletes the user's other login credentials. The same key
    logging in again extends its expiry instead of conflicting.
    """
    session: Session = ctx.session
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"user not found: {user_id}")
    public_key = p256_public_key(public_key_hex, "publicKey")
    if invalidate_existing:
        for key in session.scalars(select(ApiKey).where(
                ApiKey.user_id == user_id, ApiKey.public_key != public_key,
                ApiKey.credential_type.in_(LOGIN_CREDENTIAL_TYPES))):
            session.delete(key)
    existing = session.scalar(select(ApiKey).where(
        ApiKey.organization_id == user.organization_id, ApiKey.public_key == public_key))
    if existing is not None:
        if existing.user_id != user_id or existing.expires_at is None:
            raise AlreadyExists("this public key is already a credential in the organization; "
                                "generate a new key pair for the session")
        existing.expires_at = ctx.now + timedelta(seconds=expiration_seconds)
        existing.expiration_seconds = str(expiration_seconds)
        existing.credential_type = credential_type
        return existing.id
    key = add_api_key(session, user.organization_id, user_id, ApiKeyParams(
        api_key_name=name[:256], public_key=public_key, curve_type="API_KEY_CURVE_P256",
        expiration_seconds=str(expiration_seconds)), ctx.now, field="publicKey")
    key.credential_type = credential_type
    session.flush()
    return key.id


def credential_bundle(target_public_key_hex: str, private_key_bytes: bytes) -> str:
    """A ``credentialBundle`` (PROTOCOL.md §5.2): bs58check(compressed enc ‖ ct‖tag).

    ``decryptCredentialBundle(bundle, targetPrivateKey)`` of ``@turnkey/crypto`` opens it.
    """
    try:
        sealed = hpke.seal(private_key_bytes, target_public_key_hex)
    except InvalidRequest:
        raise InvalidRequest("targetPublicKey is not a P-256 public key: send the uncompressed "
                             "(04…) key hex of the client's embedded key",
                             field="targetPublicKey") from None
    enc = hpke.compressed(hpke.load_public_key(sealed.encapped_public))
    return str(Base58Encoder.CheckEncode(enc + sealed.ciphertext))


def new_session_key() -> tuple[str, bytes]:
    """A fresh P-256 session key: (compressed public hex, 32-byte private scalar)."""
    private_key = hpke.generate_private_key()
    return (hpke.compressed(private_key.public_key()).hex(),
            hpke.private_key_to_bytes(private_key))


def expires_in(now: datetime, seconds: int) -> datetime:
    """``now`` plus ``seconds``."""
    return now + timedelta(seconds=seconds)


# --- org resolution for logins -----------------------------------------------------------


@dataclass(frozen=True)
class LoginTarget:
    """The user a login is for, and that user's own organization."""

    organization_id: str
    user_id: str


def resolve_login_user(session: Session, organization_id: str, *, email: str | None = None,
                       phone_number: str | None = None,
                       oauth: tuple[str, str, str] | None = None,
                       public_key: str | None = None) -> LoginTarget:
    """Find the user a login names, in ``organization_id`` or one of its sub-organizations.

    Logins are often addressed to the parent (the app's) organization while the user lives
    in a sub-organization (PROTOCOL.md §6 "Org resolution for logins"). Exactly one identity
    is given: a contact (email, case-insensitively, or phone number), an OIDC identity
    ``(iss, sub, aud)`` of the users' OAuth providers, or an API key's public key. A match in
    ``organization_id`` itself wins; otherwise exactly one sub-organization must hold it.

    Raises:
        NotFound: nobody holds the identity.
        Unauthenticated: more than one sub-organization holds it.
    """
    condition: ColumnElement[bool]
    if email is not None:
        # Case-insensitive: a verification token may carry the address lower-cased while
        # the user was stored as typed (a sign-up as "Ann@…", a login as "ann@…").
        rows = select(User.organization_id, User.id).where(
            func.lower(User.email) == email.strip().lower())
        noun = "email"
    elif phone_number is not None:
        rows = select(User.organization_id, User.id).where(User.phone_number == phone_number)
        noun = "phone number"
    elif oauth is not None:
        iss, sub, aud = oauth
        rows = select(OauthProvider.organization_id, OauthProvider.user_id).where(
            OauthProvider.issuer == iss, OauthProvider.subject == sub,
            OauthProvider.audience == aud)
        noun = "OIDC identity"
    elif public_key is not None:
        rows = select(ApiKey.organization_id, ApiKey.user_id).where(
            ApiKey.public_key == public_key)
        noun = "public key"
    else:
        raise InvalidRequest("a login needs an email, phone number, OIDC token or public key")
    org_column = rows.selected_columns[0]
    children = select(Organization.id).where(Organization.parent_id == organization_id)
    condition = org_column == organization_id
    found = session.execute(rows.where(condition)).all()
    if not found:
        found = session.execute(rows.where(org_column.in_(children))).all()
    holders = {(str(org), str(user)) for org, user in found}
    if not holders:
        raise NotFound(f"no user with this {noun} in organization {organization_id} or its "
                       "sub-organizations; sign up first")
    if len({org for org, _ in holders}) > 1:
        raise Unauthenticated(f"more than one suborg associated with this {noun}")
    if len(holders) > 1:
        raise Unauthenticated(f"more than one user associated with this {noun}")
    org, user = holders.pop()
    return LoginTarget(org, user)
