"""Logging in with an OIDC token: who it names, and spending it.

Shared by ``oauth_login`` (session JWT), ``oauth`` (credential bundle) and the OIDC scheme
of ``X-Stamp-Attested``. The token is verified (:mod:`infra.sessions.oidc`), bound to the
client key by its nonce, and its ``(iss, sub, aud)`` finds the user through the users' OAuth
providers — in the organization the request names or, for logins addressed to a parent,
in exactly one of its sub-organizations (PROTOCOL.md §6 "Org resolution for logins"). Its
``aud`` must be a client id registered in the user's organization or its parent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.oauth import OidcTokenUse
from infra.db.uniqueness import add_unique
from infra.errors import NotFound, Unauthenticated
from infra.identity.ancestry import organization_chain
from infra.identity.directory import oidc_claims_unverified
from infra.sessions.oauth2 import self_issuer
from infra.sessions.oidc import (
    OidcIdentity,
    accepted_audiences,
    issuer_forms,
    token_hash,
    verifier,
)
from infra.sessions.tokens import LoginTarget, resolve_login_user

#: What an OIDC token is spent for: one login and one sign-up each.
LOGIN_USAGE: Final = "login"
SIGNUP_USAGE: Final = "signup"


@dataclass(frozen=True)
class OidcLogin:
    """A verified token and the user it logs in."""

    identity: OidcIdentity
    audience: str
    target: LoginTarget


def verify_login(session: Session, settings: Any, organization_id: str, token: str,
                 public_key_hex: str) -> OidcLogin:
    """Verify ``token`` for a login of ``public_key_hex`` addressed to ``organization_id``.

    Raises:
        InvalidOidcToken: the token is unacceptable (issuer, signature, ``kid``, expiry,
            nonce) or its audience is not a registered client id.
        NotFound: no user holds the identity; sign up first.
        Unauthenticated: more than one sub-organization holds it.
        UpstreamUnavailable: the issuer's keys could not be fetched.
    """
    identity = verifier(settings).verify(token, public_key_hex=public_key_hex,
                                         self_issuer=self_issuer(settings, session))
    for iss in issuer_forms(identity.issuer):
        for aud in identity.audiences:
            try:
                target = resolve_login_user(session, organization_id,
                                            oauth=(iss, identity.subject, aud))
            except NotFound:
                continue
            chain = organization_chain(session, target.organization_id)
            identity.audience_in(accepted_audiences(session, chain))
            return OidcLogin(identity, aud, target)
    identity.audience_in(accepted_audiences(session, organization_chain(session, organization_id)))
    raise NotFound(f"no user with this OIDC identity in organization {organization_id} or its "
                   "sub-organizations: sign up with the token first (create_sub_organization "
                   "with oauthProviders)")


def spend_token(session: Session, token_digest: str, expires_at: datetime, usage: str,
                fingerprint: str, now: datetime) -> None:
    """Record one ``usage`` (``login`` / ``signup``) of a token; another one is refused.

    ``token_digest`` is :func:`~infra.sessions.oidc.token_hash` of the token. The request
    with ``fingerprint`` spending it again (a re-sent identical request) is the same use.

    Raises:
        Unauthenticated: the token already served another request of this kind.
    """
    same = session.get(OidcTokenUse, (token_digest, usage))
    if same is not None and same.fingerprint == fingerprint:
        return
    add_unique(session, OidcTokenUse(token_hash=token_digest, usage=usage,
                                     fingerprint=fingerprint, used_at=now,
                                     expires_at=expires_at),
               select(OidcTokenUse.token_hash).where(
                   OidcTokenUse.token_hash == token_digest, OidcTokenUse.usage == usage,
                   OidcTokenUse.fingerprint != fingerprint),
               Unauthenticated(f"OIDC token already used for a {usage}; sign in with the "
                               "provider again for a fresh token"))


def spend_login(session: Session, identity: OidcIdentity, fingerprint: str, now: datetime) -> None:
    """Spend a verified token's one login (see :func:`spend_token`)."""
    spend_token(session, identity.token_hash, expiry(identity.claims, now), LOGIN_USAGE,
                fingerprint, now)


def spend_signup(session: Session, token: str, organization_id: str, user_id: str,
                 now: datetime) -> None:
    """The ``on_oidc_token`` hook of user creation (``infra.identity``): binding a user's OAuth provider
    from a token (a sign-up) spends the token's one sign-up."""
    try:
        claims = oidc_claims_unverified(token)
    except ValueError:
        return  # provider_identity refuses it with a 400
    spend_token(session, token_hash(token), expiry(claims, now), SIGNUP_USAGE,
                f"signup:{organization_id}:{user_id}", now)


def expiry(claims: dict[str, Any], now: datetime) -> datetime:
    """When a token's ``exp`` says it expires (``now`` if it has none)."""
    exp = claims.get("exp")
    if isinstance(exp, int | float) and not isinstance(exp, bool) and 0 < exp < 2**40:
        return datetime.fromtimestamp(exp, UTC)
    return now
