"""Proofs that make a binding count (``infra.identity.verified``), checked where it is made.

- :func:`prove_new_users`: after a sign-up or ``create_users``, mark what was proven: all of
  it when the operator acts; otherwise the contact the spent verification token was issued
  for, the OAuth providers whose ID token verifies, and (a sign-up) the sole login key.
- :func:`contact_token`: ``update_user_email`` / ``update_user_phone_number`` /
  ``update_user`` verify their ``verificationToken`` against the *new* value and spend it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from infra.db.models.identity import OauthProvider
from infra.db.models.organizations import User
from infra.errors import Unauthenticated
from infra.identity import verified
from infra.identity.ancestry import organization_chain
from infra.sessions.oauth2 import self_issuer
from infra.sessions.oidc import InvalidOidcToken, accepted_audiences, issuer_forms, verifier
from infra.sessions.redaction import reveal
from infra.sessions.verification import (
    TokenClaims,
    check_unbound_spender,
    record_token_use,
    token_usable_in,
    verify_token,
)

_OIDC_DETAIL = {"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                "turnkeyErrorCode": "INVALID_OIDC_TOKEN"}


def prove_new_users(ctx: Any, organization_id: str, users: Sequence[User],
                    params: Sequence[Any], *, token: TokenClaims | None,
                    sign_up: bool) -> None:
    """Mark what the request proved about the users it just created in ``organization_id``."""
    if verified.is_operator(ctx.session, ctx.user_id):
        for user in users:
            verified.vouch_user(ctx.session, user, ctx.now)
        return
    for user, user_params in zip(users, params, strict=True):
        if token is not None:
            verified.mark_contact(user, token.verification_type, token.contact, ctx.now)
        prove_oauth_providers(ctx, organization_id, user.id,
                              getattr(user_params, "oauth_providers", None) or [])
    ctx.session.flush()
    if sign_up:
        verified.mark_sole_login_key(ctx.session, organization_id, ctx.now)


def prove_oauth_providers(ctx: Any, organization_id: str, user_id: str,
                          providers: Sequence[Any]) -> None:
    """Each provider bound from an ``oidcToken`` counts once the token verifies (signature,
    issuer, expiry, and an audience the organization accepts); bare ``oidcClaims`` are
    stored unverified.

    Raises:
        Unauthenticated: an ``oidcToken`` that does not verify.
    """
    if verified.is_operator(ctx.session, ctx.user_id):
        for row in ctx.session.scalars(select(OauthProvider).where(
                OauthProvider.user_id == user_id, OauthProvider.verified_at.is_(None))):
            row.verified_at, row.proof = ctx.now, verified.PROOF_OPERATOR
        return
    settings = ctx.services.settings
    for provider in providers:
        token = dict(provider).get("oidcToken")
        if not isinstance(token, str) or not token:
            continue
        try:
            identity = verifier(settings).verify(
                token, self_issuer=self_issuer(settings, ctx.session))
            identity.audience_in(accepted_audiences(
                ctx.session, organization_chain(ctx.session, organization_id)))
        except InvalidOidcToken as ex:
            raise Unauthenticated(ex.message, details=[_OIDC_DETAIL]) from None
        for row in ctx.session.scalars(select(OauthProvider).where(
                OauthProvider.user_id == user_id,
                OauthProvider.issuer.in_(issuer_forms(identity.issuer)),
                OauthProvider.subject == identity.subject,
                OauthProvider.audience.in_(list(identity.audiences)),
                OauthProvider.verified_at.is_(None))):
            row.verified_at, row.proof = ctx.now, verified.PROOF_OIDC_TOKEN


def contact_token(ctx: Any, token: str | None, verification_type: str,
                  value: str | None, field: str) -> bool:
    """Whether the new contact ``value`` is proven: the operator sets it, or ``token`` is a
    live verification token of this organization's chain issued for exactly ``value``
    (spent here: one binding per token).

    Raises:
        Unauthenticated: a token that does not verify, was issued for another contact or
            type, another organization, or was spent already.
    """
    if not value:
        return False
    if not token:
        return verified.is_operator(ctx.session, ctx.user_id)
    from infra.worker_services import service_keys

    token = reveal(token, ctx.session, service_keys(ctx.services), "verificationToken")
    claims = verify_token(ctx.session, token, ctx.now)
    check_unbound_spender(ctx.session, claims, ctx.user_id)
    if not token_usable_in(claims, organization_chain(ctx.session, ctx.organization_id)):
        raise Unauthenticated("verification token was issued for another organization")
    same = (claims.contact == value.strip() if verification_type == "OTP_TYPE_SMS"
            else claims.contact.strip().lower() == value.strip().lower())
    if claims.verification_type != verification_type or not same:
        raise Unauthenticated(f"the verification token was issued for another contact than "
                              f"the new {field}; verify a code sent to it",
                              details=[{"field": field}])
    record_token_use(ctx.session, claims.id, "signup", ctx.activity.fingerprint, ctx.now)
    return True
