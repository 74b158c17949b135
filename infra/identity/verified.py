"""Verified identities: what may find a user, and who wins when several hold one.

A contact (email, phone number), an OIDC identity or a login key counts for login
resolution and account lookup only once it was proven:

- a contact by a spent verification token issued for exactly that value (a sign-up's token
  proves the one contact it was issued for; ``update_user_email`` /
  ``update_user_phone_number`` / ``update_user`` verify theirs against the new value);
- an OIDC identity by a verified ID token (never bare ``oidcClaims``);
- an API key as a login identity when it is the only way into a signed-up
  sub-organization (whoever controls that sub-organization holds the key, so it can
  capture nobody), or when the operator bound it.

What the *operator* binds (a user of a top-level organization other than the auth proxy's
user, acting in its organization or a sub-organization) counts as proven: the operator
vouches for its own users. Everything else may be stored but never finds a user.

:func:`holders` is the one rule every lookup uses (logins by code, OIDC, wallet key,
``list_suborgs`` filters, the auth proxy's ``/v1/account``): a holder in the addressed
organization itself first, then its sub-organizations' verified holders in the order their
bindings were verified (the first wins; ties by id). An unverified copy neither captures nor
blocks a login.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, Literal

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from infra.db.models.auth_proxy import AuthProxyConfig
from infra.db.models.identity import DeletedOrganization, OauthProvider
from infra.db.models.organizations import ApiKey, Organization, User

Kind = Literal["email", "phone", "oidc", "public_key"]
KINDS: Final = ("email", "phone", "oidc", "public_key")
#: ``OauthProvider.proof`` values.
PROOF_OIDC_TOKEN: Final = "oidc_token"
PROOF_OPERATOR: Final = "operator"


# --- who is acting ---------------------------------------------------------------------------


def is_proxy_user(session: Session, user_id: str | None) -> bool:
    """Whether ``user_id`` is an auth proxy's user (it acts for anonymous browsers)."""
    if not user_id:
        return False
    return session.scalar(select(AuthProxyConfig.id).where(
        AuthProxyConfig.user_id == user_id).limit(1)) is not None


def is_operator(session: Session, user_id: str | None) -> bool:
    """Whether ``user_id`` is the operator: a user of a top-level organization that is not an
    auth proxy's user. What the operator binds counts as proven."""
    if not user_id:
        return False
    row = session.execute(select(Organization.parent_id).join(
        User, User.organization_id == Organization.id).where(User.id == user_id)).first()
    if row is None or row[0] is not None:
        return False
    return not is_proxy_user(session, user_id)


# --- marking ---------------------------------------------------------------------------------


def vouch_user(session: Session, user: User, now: datetime) -> None:
    """The operator created or changed ``user``: its contacts, OAuth providers and keys count."""
    if user.email:
        user.email_verified_at = user.email_verified_at or now
    if user.phone_number:
        user.phone_verified_at = user.phone_verified_at or now
    session.flush()
    for provider in session.scalars(select(OauthProvider).where(
            OauthProvider.user_id == user.id, OauthProvider.verified_at.is_(None))):
        provider.verified_at, provider.proof = now, PROOF_OPERATOR
    for key in session.scalars(select(ApiKey).where(ApiKey.user_id == user.id,
                                                    ApiKey.login_verified_at.is_(None))):
        key.login_verified_at = now


def mark_contact(user: User, verification_type: str, contact: str, now: datetime) -> bool:
    """Mark the user's contact proven by a token for ``contact``; whether it matched."""
    if verification_type == "OTP_TYPE_SMS":
        if user.phone_number and user.phone_number == contact:
            user.phone_verified_at = now
            return True
        return False
    if user.email and user.email.strip().lower() == contact.strip().lower():
        user.email_verified_at = now
        return True
    return False


def set_email(user: User, value: str | None, *, proven: bool, now: datetime) -> None:
    """Change the email; it counts only if ``proven`` (unchanged value keeps its state)."""
    if (value or None) == user.email and not proven:
        return
    user.email = value or None
    user.email_verified_at = now if (proven and user.email) else None


def set_phone(user: User, value: str | None, *, proven: bool, now: datetime) -> None:
    """Change the phone number; it counts only if ``proven``."""
    if (value or None) == user.phone_number and not proven:
        return
    user.phone_number = value or None
    user.phone_verified_at = now if (proven and user.phone_number) else None


def mark_sole_login_key(session: Session, organization_id: str, now: datetime) -> None:
    """A signed-up sub-organization whose only way in is one API key: that key is a login
    identity. Its holder is the only one who can ever act there, so finding that
    sub-organization for the key can hand nobody's login to somebody else (a wallet
    sign-up of ``@turnkey/core``). A proven contact, a proven OIDC identity or a passkey
    beside the key is another way in, and the key then stays a plain credential."""
    users = session.scalars(select(User).where(User.organization_id == organization_id)).all()
    if len(users) != 1 or users[0].email_verified_at or users[0].phone_verified_at:
        return
    keys = session.scalars(select(ApiKey).where(ApiKey.organization_id == organization_id)).all()
    providers = session.scalar(select(func.count()).select_from(OauthProvider).where(
        OauthProvider.organization_id == organization_id, OauthProvider.verified_at.is_not(None)))
    if len(keys) != 1 or providers or _has_authenticator(session, organization_id):
        return
    keys[0].login_verified_at = now


def _has_authenticator(session: Session, organization_id: str) -> bool:
    from infra.db.models.identity import Authenticator

    return session.scalar(select(Authenticator.id).where(
        Authenticator.organization_id == organization_id).limit(1)) is not None


# --- the one resolution rule -------------------------------------------------------------------


def _rows(kind: Kind, value: Any) -> Any:
    """``select(organization_id, user_id, verified_at, id)`` of verified holders."""
    if kind == "email":
        return select(User.organization_id, User.id, User.email_verified_at, User.id).where(
            func.lower(User.email) == str(value).strip().lower(),
            User.email_verified_at.is_not(None))
    if kind == "phone":
        return select(User.organization_id, User.id, User.phone_verified_at, User.id).where(
            User.phone_number == str(value).strip(), User.phone_verified_at.is_not(None))
    if kind == "oidc":
        issuers, subject, audiences = value
        return select(OauthProvider.organization_id, OauthProvider.user_id,
                      OauthProvider.verified_at, OauthProvider.id).where(
            OauthProvider.issuer.in_(list(issuers)), OauthProvider.subject == str(subject),
            OauthProvider.audience.in_(list(audiences)), OauthProvider.verified_at.is_not(None))
    return select(ApiKey.organization_id, ApiKey.user_id, ApiKey.login_verified_at,
                  ApiKey.id).where(ApiKey.public_key == str(value).strip().lower(),
                                   ApiKey.login_verified_at.is_not(None))


def holders(session: Session, organization_id: str, kind: Kind, value: Any, *,
            include_self: bool = True, limit: int | None = None) -> list[tuple[str, str]]:
    """``(organization_id, user_id)`` holding a verified identity, the winner first.

    Looked for in ``organization_id`` itself (unless ``include_self`` is false; a match
    there wins) and in its live sub-organizations, ordered by when the binding was
    verified, then by id.
    """
    rows = _rows(kind, value)
    org, _user, verified_at, row_id = rows.selected_columns
    children = select(Organization.id).where(
        Organization.parent_id == organization_id,
        Organization.id.not_in(select(DeletedOrganization.organization_id)))
    where = org.in_(children)
    if include_self:
        where = where | (org == organization_id)
    stmt = rows.where(where).order_by(case((org == organization_id, 0), else_=1), verified_at,
                                      row_id)
    if limit:
        stmt = stmt.limit(limit)
    out: list[tuple[str, str]] = []
    for found_org, user_id, _at, _id in session.execute(stmt):
        pair = (str(found_org), str(user_id))
        if pair not in out:
            out.append(pair)
    return out


def winner(session: Session, organization_id: str, kind: Kind, value: Any, *,
           include_self: bool = True) -> tuple[str, str] | None:
    """The holder a login or lookup finds (see :func:`holders`), or ``None``."""
    found = holders(session, organization_id, kind, value, include_self=include_self, limit=1)
    return found[0] if found else None


def in_organizations(session: Session, organization_ids: Sequence[str], kind: Kind,
                     value: Any) -> list[tuple[str, str]]:
    """Verified holders within exactly ``organization_ids``, in that order of organizations."""
    rows = _rows(kind, value)
    org, _user, verified_at, row_id = rows.selected_columns
    found = session.execute(rows.where(org.in_(list(organization_ids)))
                            .order_by(verified_at, row_id)).all()
    pairs = [(str(o), str(u)) for o, u, _a, _i in found]
    return sorted(dict.fromkeys(pairs), key=lambda p: list(organization_ids).index(p[0]))
