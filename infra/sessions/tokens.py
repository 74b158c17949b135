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
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.access import issuance
from infra.crypto import hpke
from infra.crypto.stamp import normalize_public_key
from infra.db.models.organizations import ApiKey, User
from infra.errors import AlreadyExists, InvalidRequest, NotFound
from infra.identity import verified
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
                      public_key_hex: str, session_type: SessionType | str, expiration_seconds: int,
                      now: datetime, session: Session, session_profile_id: str | None = None) -> str:
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
    if session_profile_id:
        # A session under a profile (infra.access.session_profiles): its type is the
        # profile's name (as Turnkey documents), and the profile id rides along.
        claims["session_profile_id"] = session_profile_id
    return sign_session_jwt(keys.current(session, NOTARIZER).private_key, claims)


def p256_public_key(public_key_hex: str, field: str) -> str:
    """A client P-256 key in its stamping form (compressed hex), or a 400 saying what to send."""
    try:
        return normalize_public_key("API_KEY_CURVE_P256", public_key_hex)
    except ValueError:
        raise InvalidRequest(
            f"{field} is not a P-256 public key: send the compressed (33-byte, 02/03…) or "
            "uncompressed (04…) SEC1 key hex", field=field) from None


def login_grant(ctx: Any, *, user_id: str, organization_id: str, public_key_hex: str,
                seconds: int, named_profile_id: str | None = None) -> issuance.Grant:
    """What the login credential ``public_key_hex`` of ``user_id`` carries (``ctx.activity``
    issues it; ``infra.access.issuance``): the stamping credential's profile or the one the
    login names (``named_profile_id``), at most that profile's bound, and its lineage. A key
    that logs in again keeps the profile it has unless the login gives it one."""
    grant = issuance.grant(ctx.session, ctx.activity, user_id=user_id,
                           organization_id=organization_id, seconds=seconds,
                           named_profile_id=named_profile_id)
    held = ctx.session.scalar(select(ApiKey.session_profile_id).where(
        ApiKey.organization_id == organization_id, ApiKey.user_id == user_id,
        ApiKey.public_key == p256_public_key(public_key_hex, "publicKey")))
    return issuance.keeping(ctx.session, grant, held)


def add_login_credential(ctx: Any, *, user_id: str, public_key_hex: str, expiration_seconds: int,
                         invalidate_existing: bool, name: str,
                         credential_type: str = "CREDENTIAL_TYPE_LOGIN",
                         grant: issuance.Grant | None = None) -> str:
    """Register ``public_key_hex`` as an expiring P-256 API key of ``user_id``; its id.

    The key lives in the user's own organization. Expiring keys count toward the per-user
    limit, and the oldest expiring one is evicted to make room (``infra.identity.quotas``).
    ``invalidate_existing`` first deletes the user's other login credentials. The same key
    logging in again extends its expiry instead of conflicting.

    ``grant``: what the credential carries, from :func:`login_grant` (computed here for
    ``expiration_seconds`` when left out). Its lifetime is the grant's. A key that logs in
    again keeps its lineage (it gains one only if it had none and another key stamped).
    """
    session: Session = ctx.session
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"user not found: {user_id}")
    if grant is None:
        grant = login_grant(ctx, user_id=user_id, organization_id=user.organization_id,
                            public_key_hex=public_key_hex, seconds=expiration_seconds)
    seconds = grant.lifetime(expiration_seconds)
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
        existing.expires_at = ctx.now + timedelta(seconds=seconds)
        existing.expiration_seconds = str(seconds)
        existing.credential_type = credential_type
        existing.session_profile_id = grant.profile_id
        if existing.lineage_root_id is None and grant.issuer_key_id != existing.id:
            existing.lineage_root_id = grant.lineage_root_id
        return existing.id
    key = add_api_key(session, user.organization_id, user_id, ApiKeyParams(
        api_key_name=name[:256], public_key=public_key, curve_type="API_KEY_CURVE_P256",
        expiration_seconds=str(seconds)), ctx.now, field="publicKey")
    key.credential_type = credential_type
    key.session_profile_id = grant.profile_id
    key.lineage_root_id = grant.lineage_root_id
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
    ``(iss, sub, aud)`` of the users' OAuth providers, or an API key's public key. Only
    verified bindings count, and the one rule of ``infra.identity.verified.holders`` picks
    the holder: the organization itself first, then the sub-organization whose binding was
    verified first.

    Raises:
        NotFound: nobody holds the identity (verified).
    """
    kind: verified.Kind
    value: Any
    if email is not None:
        kind, value, noun = "email", email, "email"
    elif phone_number is not None:
        kind, value, noun = "phone", phone_number, "phone number"
    elif oauth is not None:
        iss, sub, aud = oauth
        kind, value, noun = "oidc", ((iss,), sub, (aud,)), "OIDC identity"
    elif public_key is not None:
        kind, value, noun = "public_key", public_key, "public key"
    else:
        raise InvalidRequest("a login needs an email, phone number, OIDC token or public key")
    found = verified.winner(session, organization_id, kind, value)
    if found is None:
        raise NotFound(f"no user with this verified {noun} in organization {organization_id} "
                       "or its sub-organizations; sign up first")
    return LoginTarget(*found)
