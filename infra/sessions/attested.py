"""The verification-token scheme of ``X-Stamp-Attested`` (``@turnkey/core``'s ``loginWithOtp``).

``publicKeyAttestation`` is a ``verify_otp`` token whose ``public_key`` is the stamp's key.
Only ``stamp_login`` may be stamped this way; it spends the token's one login (a re-sent
identical request is the same use). The token's contact names the user, in the addressed
organization or (login addressed to a parent) one of its sub-organizations.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from infra.auth.attested import AttestedScheme, AttestedStamp, body_type
from infra.auth.principal import Principal
from infra.crypto.stamp import verify_stamp_signature
from infra.db.models.organizations import User
from infra.errors import Unauthenticated
from infra.identity.ancestry import organization_chain
from infra.sessions.tokens import p256_public_key
from infra.sessions.verification import fingerprint_of, record_token_use, verify_token

SCHEME: Final = "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN"
SIGNATURE_SCHEME: Final = "SIGNATURE_SCHEME_TK_API_P256"
#: What an attested stamp may submit: logins only (the session key stamps everything else).
ATTESTED_TYPES: Final = frozenset({"ACTIVITY_TYPE_STAMP_LOGIN"})


def _unverified_claims(token: str) -> dict[str, Any]:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _users_with_contact(verification_type: str, contact: str) -> Select[str, str]:
    if verification_type == "OTP_TYPE_SMS":
        return select(User.organization_id, User.id).where(User.phone_number == contact)
    return select(User.organization_id, User.id).where(
        func.lower(User.email) == contact.strip().lower())


def holders(stamp: AttestedStamp) -> Select[str]:
    """Organizations holding a user with the token's contact (token not verified here)."""
    claims = _unverified_claims(stamp.attestation)
    query = _users_with_contact(str(claims.get("verification_type", "")),
                                str(claims.get("contact", "")))
    return select(query.subquery().c.organization_id)


def verify(session: Session, stamp: AttestedStamp, body: bytes, candidates: list[str],
           now: datetime) -> Principal:
    """Verify token, binding, body signature and token use; the contact's user."""
    if body_type(body) not in ATTESTED_TYPES:
        raise Unauthenticated("X-Stamp-Attested authenticates stamp_login only; stamp other "
                              "requests with the session key")
    claims = verify_token(session, stamp.attestation, now)
    key = p256_public_key(stamp.public_key, "publicKey")
    if not claims.public_key or p256_public_key(claims.public_key, "public_key") != key:
        raise Unauthenticated("the stamp's publicKey is not the key the verification token "
                              "was issued to")
    verify_stamp_signature(SIGNATURE_SCHEME, key, stamp.signature, body)
    query = _users_with_contact(claims.verification_type, claims.contact)
    users = session.execute(query.where(User.organization_id.in_(candidates))).all()
    users = sorted(users, key=lambda row: candidates.index(row[0]))
    if not users:
        raise Unauthenticated("no user with the verification token's contact in this "
                              "organization or its parent; sign up first")
    organization_id, user_id = users[0]
    if claims.organization_id not in organization_chain(session, organization_id):
        raise Unauthenticated("verification token was issued for another organization")
    record_token_use(session, claims.id, "login", fingerprint_of(body), now)
    return Principal(user_id=user_id, organization_id=organization_id, credential_id=claims.id,
                     credential_type="CREDENTIAL_TYPE_OTP_AUTH_KEY_P256", public_key=key,
                     scheme=SIGNATURE_SCHEME, signature=stamp.signature)


#: The scheme, wired into ``X-Stamp-Attested`` by ``infra.bootstrap``.
ATTESTED_SCHEME = AttestedScheme(verify=verify, holders=holders)
