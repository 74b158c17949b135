"""The OIDC scheme of ``X-Stamp-Attested`` (``@turnkey/core``'s ``loginWithOauth``).

``publicKeyAttestation`` is an ID token whose ``nonce`` (or ``tknonce``) binds the stamp's
``publicKey`` (PROTOCOL.md §2.5, §7.4); the key's signature over the body proves possession.
The token's ``(iss, sub, aud)`` names the user through their OAuth providers, in the
addressed organization, its parent or — for a login addressed to a parent — exactly one of
its sub-organizations (``holders``). Only ``stamp_login`` may be stamped this way, and it
spends the token's one login (the identical request re-sent is the same use).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from infra.auth.attested import AttestedScheme, AttestedStamp, body_type
from infra.auth.principal import Principal
from infra.crypto.stamp import verify_stamp_signature
from infra.db.models.identity import OauthProvider
from infra.errors import Unauthenticated
from infra.identity.ancestry import organization_chain
from infra.identity.directory import oidc_claims_unverified
from infra.sessions.attested import ATTESTED_TYPES, SIGNATURE_SCHEME
from infra.sessions.oauth2 import self_issuer
from infra.sessions.oidc import (
    InvalidOidcToken,
    OidcIdentity,
    accepted_audiences,
    issuer_forms,
    verifier,
)
from infra.sessions.oidc_login import LOGIN_USAGE, expiry, spend_token
from infra.sessions.tokens import p256_public_key
from infra.sessions.verification import fingerprint_of
from infra.settings import Settings

SCHEME: Final = "STAMP_ATTESTED_SCHEME_P256_OIDC"
_DETAIL: Final = {"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                  "turnkeyErrorCode": "INVALID_OIDC_TOKEN"}


@functools.cache
def _settings() -> Settings:
    """This process's settings (stamp verifiers receive no services)."""
    return Settings.from_env()


def _providers(iss: Any, sub: Any, audiences: Any) -> Select[str, str, str]:
    auds = [audiences] if isinstance(audiences, str) else [
        a for a in (audiences if isinstance(audiences, list) else []) if isinstance(a, str)]
    return select(OauthProvider.organization_id, OauthProvider.user_id, OauthProvider.id).where(
        OauthProvider.issuer.in_(issuer_forms(str(iss))), OauthProvider.subject == str(sub),
        OauthProvider.audience.in_(auds))


def holders(stamp: AttestedStamp) -> Select[Any]:
    """Organizations holding the token's OIDC identity (token not verified here)."""
    try:
        claims = oidc_claims_unverified(stamp.attestation)
    except ValueError:
        claims = {}
    query = _providers(claims.get("iss"), claims.get("sub"), claims.get("aud"))
    return select(query.subquery().c.organization_id)


def _verified(session: Session, stamp: AttestedStamp) -> OidcIdentity:
    settings = _settings()
    try:
        return verifier(settings).verify(stamp.attestation, public_key_hex=stamp.public_key,
                                         self_issuer=self_issuer(settings, session))
    except InvalidOidcToken as ex:
        raise Unauthenticated(ex.message, details=[_DETAIL]) from None


def verify(session: Session, stamp: AttestedStamp, body: bytes, candidates: list[str],
           now: datetime) -> Principal:
    """Verify the ID token, its binding to the key, the body signature; spend its login."""
    if body_type(body) not in ATTESTED_TYPES:
        raise Unauthenticated("X-Stamp-Attested authenticates stamp_login only; stamp other "
                              "requests with the session key")
    key = p256_public_key(stamp.public_key, "publicKey")
    identity = _verified(session, stamp)
    verify_stamp_signature(SIGNATURE_SCHEME, key, stamp.signature, body)
    found = session.execute(_providers(identity.issuer, identity.subject, list(identity.audiences))
                            .where(OauthProvider.organization_id.in_(candidates))).all()
    if not found:
        raise Unauthenticated("no user with this OIDC identity in this organization or its "
                              "parent; sign up with the token first")
    organization_id, user_id, provider_id = sorted(found, key=lambda r: candidates.index(r[0]))[0]
    try:
        identity.audience_in(accepted_audiences(session, organization_chain(session,
                                                                            organization_id)))
    except InvalidOidcToken as ex:
        raise Unauthenticated(ex.message, details=[_DETAIL]) from None
    spend_token(session, identity.token_hash, expiry(identity.claims, now), LOGIN_USAGE,
                fingerprint_of(body), now)
    return Principal(user_id=user_id, organization_id=organization_id, credential_id=provider_id,
                     credential_type="CREDENTIAL_TYPE_OAUTH_KEY_P256", public_key=key,
                     scheme=SIGNATURE_SCHEME, signature=stamp.signature)


#: The scheme, wired into ``X-Stamp-Attested`` by ``infra.bootstrap``.
ATTESTED_SCHEME = AttestedScheme(verify=verify, holders=holders)
