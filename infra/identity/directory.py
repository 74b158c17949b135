"""Users' identities beyond API keys: contacts, OAuth providers, tags; organization sections.

* :func:`attach_identity`: when a user is created (``infra.identity.users.create_user``:
  ``create_users``, sub-organization root users) its email / phone number are validated and
  its passkeys, OAuth providers and tags are attached (:func:`check_identity` checks the same
  read-only from activity ``check``, so bad input is a 400 before the activity is stored);
* :func:`user_identity_section`: ``oauthProviders`` and ``userTags`` of ``v1User``
  (``infra.views.users.USER_SECTIONS``);
* :func:`organization_section`: ``tags``, ``invitations`` and
  ``smartContractInterfaceReferences`` of the organization (``infra.queries.get_organization``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from infra.clock import wire_timestamp
from infra.db.base import Base
from infra.db.models.identity import (
    Invitation,
    OauthProvider,
    SmartContractInterface,
    Tag,
    UserTagAssignment,
)
from infra.db.models.organizations import User
from infra.db.uniqueness import add_unique
from infra.errors import AlreadyExists, InvalidRequest, NotFound
from infra.validation.contact import optional_email_address, optional_phone_number
from infra.validation.names import required_name

TAG_TYPE_USER = "TAG_TYPE_USER"
TAG_TYPE_PRIVATE_KEY = "TAG_TYPE_PRIVATE_KEY"


# --------------------------------------------------------------------------- contacts


def validate_contacts(params: Any, field: str) -> None:
    """Validate ``userEmail`` (syntax) and ``userPhoneNumber`` (E.164) of user params.

    Raises:
        InvalidRequest: naming the field.
    """
    optional_email_address(getattr(params, "user_email", None), field=f"{field}.userEmail")
    optional_phone_number(getattr(params, "user_phone_number", None), field=f"{field}.userPhoneNumber")


# --------------------------------------------------------------------------- OAuth providers


def oidc_claims_unverified(token: str) -> dict[str, Any]:
    """The payload of a JWT *without* verifying it.

    Only used where the submitter (an authenticated member of the organization) asserts the
    binding, exactly as ``oidcClaims`` lets it do directly; logins verify tokens elsewhere.

    Raises:
        ValueError: not a JWT with a JSON object payload.
    """
    parts = token.split(".")
    if len(parts) != 3:
        raise ValueError("not a JWT")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (binascii.Error, ValueError, UnicodeDecodeError) as ex:
        raise ValueError("JWT payload is not JSON") from ex
    if not isinstance(claims, dict):
        raise ValueError("JWT payload is not an object")
    return claims


def provider_identity(params: Mapping[str, Any], field: str) -> tuple[str, str, str, str]:
    """``(name, issuer, audience, subject)`` of a ``v1OauthProviderParams(V2)``.

    Raises:
        InvalidRequest: no name, or neither usable ``oidcClaims`` nor a decodable token.
    """
    name = required_name(params, "providerName", field)
    claims = params.get("oidcClaims")
    if not claims:
        token = params.get("oidcToken")
        if not isinstance(token, str) or not token:
            raise InvalidRequest(
                "send oidcClaims {iss, sub, aud} or an oidcToken", field=f"{field}.oidcToken"
            )
        try:
            claims = oidc_claims_unverified(token)
        except ValueError as ex:
            raise InvalidRequest(f"oidcToken is not a JWT: {ex}", field=f"{field}.oidcToken") from ex
    if not isinstance(claims, Mapping):
        raise InvalidRequest("oidcClaims must be an object", field=f"{field}.oidcClaims")
    audience = claims.get("aud")
    if isinstance(audience, list):
        audience = audience[0] if audience else None
    values = (claims.get("iss"), audience, claims.get("sub"))
    if not all(isinstance(v, str) and v for v in values):
        raise InvalidRequest("OIDC claims need non-empty iss, sub and aud", field=f"{field}.oidcClaims")
    issuer, aud, subject = (str(v) for v in values)
    if max(len(issuer), len(aud), len(subject)) > 512:
        raise InvalidRequest("OIDC iss, sub and aud may be at most 512 characters each",
                             field=f"{field}.oidcClaims")
    return name, issuer, aud, subject


#: Called as ``hook(session, oidc_token, organization_id, user_id, now)`` when a provider is
#: bound from an ``oidcToken`` (a sign-up): callers pass
#: ``infra.sessions.oidc_login.spend_signup``, which spends the token's one sign-up.
OidcTokenHook = Callable[[Session, str, str, str, datetime], None]


def add_oauth_provider(
    session: Session,
    organization_id: str,
    user_id: str,
    params: Mapping[str, Any],
    now: datetime,
    field: str = "oauthProviders[0]",
    *,
    on_oidc_token: OidcTokenHook,
) -> OauthProvider:
    """Bind an OIDC identity to a user; one user per identity within an organization.

    Raises:
        InvalidRequest: unusable parameters.
        AlreadyExists: the identity is bound to a user of the organization already.
    """
    name, issuer, audience, subject = provider_identity(params, field)
    token = params.get("oidcToken")
    if isinstance(token, str) and token:
        on_oidc_token(session, token, organization_id, user_id, now)

    row = OauthProvider(
        organization_id=organization_id,
        user_id=user_id,
        name=name,
        issuer=issuer,
        audience=audience,
        subject=subject,
        created_at=now,
        updated_at=now,
    )
    add_unique(
        session,
        row,
        select(OauthProvider.id).where(
            OauthProvider.organization_id == organization_id,
            OauthProvider.issuer == issuer,
            OauthProvider.audience == audience,
            OauthProvider.subject == subject,
        ),
        AlreadyExists(
            "an OAuth provider with this issuer, audience and subject already exists in the organization"
        ),
    )
    return row


def render_oauth_provider(row: OauthProvider) -> dict[str, Any]:
    """``v1OauthProvider``."""
    return {
        "providerId": row.id,
        "providerName": row.name,
        "issuer": row.issuer,
        "audience": row.audience,
        "subject": row.subject,
        "createdAt": wire_timestamp(row.created_at),
        "updatedAt": wire_timestamp(row.updated_at),
    }


# --------------------------------------------------------------------------- tags


def render_tag(tag: Tag) -> dict[str, Any]:
    """``datav1Tag``."""
    return {
        "tagId": tag.id,
        "tagName": tag.name,
        "tagType": tag.tag_type,
        "createdAt": wire_timestamp(tag.created_at),
        "updatedAt": wire_timestamp(tag.updated_at),
    }


def tag_in_org(session: Session, organization_id: str, tag_id: str, tag_type: str) -> Tag:
    """The tag ``tag_id`` of that type in the organization, or a 404."""
    tag = session.get(Tag, tag_id)
    if tag is None or tag.organization_id != organization_id or tag.tag_type != tag_type:
        kind = "user" if tag_type == TAG_TYPE_USER else "private key"
        raise NotFound(f"{kind} tag not found in organization: {tag_id}")
    return tag


def create_tag(session: Session, organization_id: str, tag_type: str, name: str, now: datetime) -> Tag:
    """A new tag; names are unique per organization and tag type.

    Raises:
        InvalidRequest: empty name.
        AlreadyExists: a tag of that type with that name exists.
    """
    if not name.strip():
        raise InvalidRequest("the tag name must not be empty")
    check_tag_name_free(session, organization_id, tag_type, name)
    tag = Tag(
        organization_id=organization_id,
        tag_type=tag_type,
        name=name,
        created_at=now,
        updated_at=now,
    )
    session.add(tag)
    session.flush()
    return tag


def check_tag_name_free(
    session: Session, organization_id: str, tag_type: str, name: str, except_id: str = ""
) -> None:
    """Raise :class:`AlreadyExists` if another tag of that type carries ``name``."""
    clash = session.scalar(
        select(Tag.id).where(
            Tag.organization_id == organization_id,
            Tag.tag_type == tag_type,
            Tag.name == name,
            Tag.id != except_id,
        )
    )
    if clash is not None:
        raise AlreadyExists(f"a tag named {name!r} already exists in the organization")


def users_in_org(session: Session, organization_id: str, user_ids: Iterable[str]) -> list[User]:
    """The users named (in order, deduplicated), or a 404 naming the missing ones."""
    wanted = list(dict.fromkeys(user_ids))
    found = {
        u.id: u
        for u in session.scalars(
            select(User).where(User.id.in_(wanted), User.organization_id == organization_id)
        )
    }
    missing = [u for u in wanted if u not in found]
    if missing:
        raise NotFound(f"users not found in organization: {', '.join(missing)}")
    return [found[u] for u in wanted]


def assign_user_tag(session: Session, tag: Tag, user_ids: Iterable[str]) -> None:
    """Tag users (already tagged users are left alone)."""
    existing = set(
        session.scalars(select(UserTagAssignment.user_id).where(UserTagAssignment.tag_id == tag.id))
    )
    for user_id in dict.fromkeys(user_ids):
        if user_id not in existing:
            session.add(UserTagAssignment(tag_id=tag.id, user_id=user_id))
    session.flush()


# --------------------------------------------------------------------------- private-key tags


def _private_keys_table() -> Table | None:
    table = Base.metadata.tables.get("private_keys")
    return table if isinstance(table, Table) and "tags" in table.c else None


def private_keys_in_org(session: Session, organization_id: str, key_ids: Iterable[str]) -> list[str]:
    """The private key ids named (deduplicated), or a 404 naming the missing ones."""
    wanted = list(dict.fromkeys(key_ids))
    if not wanted:
        return []
    table = _private_keys_table()
    found: set[str] = set()
    if table is not None:
        found = set(
            session.scalars(
                select(table.c.id).where(table.c.id.in_(wanted), table.c.organization_id == organization_id)
            )
        )
    missing = [k for k in wanted if k not in found]
    if missing:
        raise NotFound(f"private keys not found in organization: {', '.join(missing)}")
    return wanted


def private_keys_tagged(session: Session, organization_id: str, tag_ids: Iterable[str]) -> list[str]:
    """Ids of the organization's private keys carrying any of ``tag_ids``."""
    table = _private_keys_table()
    wanted = set(tag_ids)
    if table is None or not wanted:
        return []
    rows = session.execute(select(table.c.id, table.c.tags).where(table.c.organization_id == organization_id))
    return [key_id for key_id, tags in rows if wanted & set(tags or [])]


def retag_private_keys(
    session: Session,
    organization_id: str,
    key_ids: Iterable[str],
    *,
    add: Iterable[str] = (),
    remove: Iterable[str] = (),
) -> None:
    """Add/remove tag ids on private keys (stored in ``private_keys.tags``)."""
    table = _private_keys_table()
    ids = list(key_ids)
    if table is None or not ids:
        return
    adding, removing = list(add), set(remove)
    rows = session.execute(
        select(table.c.id, table.c.tags).where(
            table.c.id.in_(ids), table.c.organization_id == organization_id
        )
    ).all()
    for key_id, tags in rows:
        current = [t for t in (tags or []) if t not in removing]
        current += [t for t in adding if t not in current]
        session.execute(update(table).where(table.c.id == key_id).values(tags=current))


# --------------------------------------------------------------------------- user extras


def attach_identity(
    session: Session, organization_id: str, user: User, params: Any, now: datetime, field: str,
    *, on_oidc_token: OidcTokenHook,
) -> None:
    """Validate a new user's contacts, attach its passkeys, OAuth providers and tags."""
    from infra.identity.passkeys import add_authenticator

    validate_contacts(params, field)
    for i, authenticator in enumerate(getattr(params, "authenticators", []) or []):
        add_authenticator(
            session,
            organization_id,
            user.id,
            dict(authenticator),
            now,
            f"{field}.authenticators[{i}]",
        )
    for i, provider in enumerate(getattr(params, "oauth_providers", []) or []):
        add_oauth_provider(
            session, organization_id, user.id, dict(provider), now,
            f"{field}.oauthProviders[{i}]", on_oidc_token=on_oidc_token,
        )
    for tag_id in getattr(params, "user_tags", []) or []:
        tag = tag_in_org(session, organization_id, tag_id, TAG_TYPE_USER)
        assign_user_tag(session, tag, [user.id])


def check_identity(session: Session, organization_id: str, params: Any, field: str) -> None:
    """What ``attach_identity`` would refuse, checked read-only.

    Contacts, passkey attestations (against ``organization_id``'s WebAuthn origins), OAuth
    identities and user tags; duplicates are left to ``attach_identity``.
    """
    from infra.identity.passkeys import verify_authenticator

    validate_contacts(params, field)
    for i, authenticator in enumerate(getattr(params, "authenticators", []) or []):
        verify_authenticator(session, organization_id, dict(authenticator),
                             f"{field}.authenticators[{i}]")
    for i, provider in enumerate(getattr(params, "oauth_providers", []) or []):
        provider_identity(dict(provider), f"{field}.oauthProviders[{i}]")
    for tag_id in getattr(params, "user_tags", []) or []:
        tag_in_org(session, organization_id, tag_id, TAG_TYPE_USER)


# --------------------------------------------------------------------------- view sections


# Built once: every rendered user (each vote of each answered activity) runs them.
_OAUTH_PROVIDERS_OF: Final = (
    select(OauthProvider)
    .where(OauthProvider.user_id.in_(bindparam("ids", expanding=True)))
    .order_by(OauthProvider.created_at, OauthProvider.id)
)
_TAGS_OF: Final = (
    select(UserTagAssignment.user_id, Tag.id)
    .join(Tag, Tag.id == UserTagAssignment.tag_id)
    .where(UserTagAssignment.user_id.in_(bindparam("ids", expanding=True)))
    .order_by(Tag.created_at, Tag.id)
)


def user_identity_section(session: Session, user_ids: Sequence[str]) -> dict[str, dict[str, list[Any]]]:
    """``v1User`` section (``infra.views.users.USER_SECTIONS``): ``oauthProviders`` and
    ``userTags`` (tag ids)."""
    out: dict[str, dict[str, list[Any]]] = {u: {"oauthProviders": [], "userTags": []} for u in user_ids}
    if not user_ids:
        return out
    ids = {"ids": list(user_ids)}
    for provider in session.scalars(_OAUTH_PROVIDERS_OF, ids):
        out[provider.user_id]["oauthProviders"].append(render_oauth_provider(provider))
    for user_id, tag_id in session.execute(_TAGS_OF, ids):
        out[user_id]["userTags"].append(tag_id)
    return out


def render_invitation(row: Invitation) -> dict[str, Any]:
    """An invitation as ``get_organization`` lists it."""
    return {
        "invitationId": row.id,
        "receiverUserName": row.receiver_user_name,
        "receiverEmail": row.receiver_email,
        "receiverUserTags": list(row.receiver_user_tags or []),
        "accessType": row.access_type,
        "status": row.status,
        "senderUserId": row.sender_user_id,
        "createdAt": wire_timestamp(row.created_at),
        "updatedAt": wire_timestamp(row.updated_at),
    }


def render_contract_interface(row: SmartContractInterface) -> dict[str, Any]:
    """``externaldatav1SmartContractInterface``."""
    return {
        "organizationId": row.organization_id,
        "smartContractInterfaceId": row.id,
        "smartContractAddress": row.address,
        "smartContractInterface": row.interface,
        "type": row.interface_type,
        "label": row.label,
        "notes": row.notes,
        "createdAt": wire_timestamp(row.created_at),
        "updatedAt": wire_timestamp(row.updated_at),
    }


def organization_section(session: Session, organization_id: str) -> dict[str, Any]:
    """``v1OrganizationData`` section (``infra.queries.get_organization``): tags,
    invitations, contract interface references."""
    tags = session.scalars(
        select(Tag).where(Tag.organization_id == organization_id).order_by(Tag.created_at, Tag.id)
    )
    invitations = session.scalars(
        select(Invitation)
        .where(Invitation.organization_id == organization_id)
        .order_by(Invitation.created_at, Invitation.id)
    )
    interfaces = session.scalars(
        select(SmartContractInterface)
        .where(SmartContractInterface.organization_id == organization_id)
        .order_by(SmartContractInterface.created_at, SmartContractInterface.id)
    )
    return {
        "tags": [render_tag(t) for t in tags],
        "invitations": [render_invitation(i) for i in invitations],
        "smartContractInterfaceReferences": [
            {
                "smartContractInterfaceId": i.id,
                "smartContractAddress": i.address,
                "digest": hashlib.sha256(i.interface.encode()).hexdigest(),
            }
            for i in interfaces
        ],
    }
