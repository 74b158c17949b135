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
from typing import Any, Final

from pydantic import field_validator
from sqlalchemy.orm import Session

from infra.errors import NotFound
from infra.identity.ancestry import organization_chain
from infra.sessions.oauth2 import self_issuer
from infra.sessions.oidc import OidcIdentity, accepted_audiences, verifier
from infra.sessions.tokens import DEFAULT_SESSION_SECONDS, LoginTarget, resolve_login_user
from infra.wiremodel import WireModel

#: Longest session a login may ask for (a day; the credential keeps stamping until then).
MAX_SESSION_SECONDS: Final = 24 * 3600
#: The usage an OIDC token is spent for by a login (a sign-up is the other one).
LOGIN_USAGE: Final = "login"


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
    for aud in identity.audiences:
        try:
            target = resolve_login_user(session, organization_id,
                                        oauth=(identity.issuer, identity.subject, aud))
        except NotFound:
            continue
        chain = organization_chain(session, target.organization_id)
        identity.audience_in(accepted_audiences(session, chain))
        return OidcLogin(identity, aud, target)
    identity.audience_in(accepted_audiences(session, organization_chain(session, organization_id)))
    raise NotFound(f"no user with this OIDC identity in organization {organization_id} or its "
                   "sub-organizations: sign up with the token first (create_sub_organization "
                   "with oauthProviders)")


def login_organization(session: Session, settings: Any, organization_id: str, token: str,
                       public_key_hex: str) -> str:
    """The organization an OIDC login addressed to ``organization_id`` is for (§6)."""
    return verify_login(session, settings, organization_id, token, public_key_hex
                        ).target.organization_id


class SessionLength(WireModel):
    """``expirationSeconds`` of a login: whole seconds, 900 when left out."""

    expiration_seconds: str | None = None

    @field_validator("expiration_seconds", mode="before")
    @classmethod
    def _seconds(cls, value: object) -> object:
        if value is None or value == "":
            return None
        text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
        if (not text.isascii() or not text.isdigit() or len(text) > 9
                or not 1 <= int(text) <= MAX_SESSION_SECONDS):
            raise ValueError("expirationSeconds must be a whole number of seconds from 1 to "
                             f"{MAX_SESSION_SECONDS}")
        return str(int(text))

    @property
    def seconds(self) -> int:
        """The session length in seconds."""
        return int(self.expiration_seconds) if self.expiration_seconds else DEFAULT_SESSION_SECONDS


def spend_token(ctx: Any, identity: OidcIdentity, usage: str) -> None:
    """Record one ``usage`` (``login`` / ``signup``) of the token; a second one is refused.

    The same activity executing again (a redelivered message) is not a second use.
    """
    from infra.sessions.verification import record_token_use

    record_token_use(ctx.session, f"oidc:{identity.token_hash}", usage, ctx.activity.fingerprint)
