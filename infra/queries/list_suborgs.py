"""``list_suborgs``: ids of the organization's sub-organizations, optionally filtered.

``EMAIL``, ``PHONE_NUMBER``, ``OIDC_TOKEN`` and ``PUBLIC_KEY`` answer at most one
sub-organization: the one a login with that identity lands in (verified bindings only, the
first verified wins: ``infra.identity.verified``). The others list every match.
Filters (``filterType`` / ``filterValue``), each matching a sub-organization that holds:
``NAME`` (its name), ``USERNAME`` / ``EMAIL`` (case-insensitive) / ``PHONE_NUMBER`` (a user),
``CREDENTIAL_ID`` (a passkey), ``PUBLIC_KEY`` (an API key or passkey key), ``OIDC_TOKEN``
(an OAuth provider with the token's iss/sub/aud) or ``WALLET_ACCOUNT_ADDRESS`` (a wallet
account or private-key address). Deleted sub-organizations are not listed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, select, union

from infra.auth.webauthn import normalize_credential_id
from infra.db.base import Base
from infra.db.models.identity import Authenticator, DeletedOrganization
from infra.db.models.organizations import Organization, User
from infra.errors import InvalidRequest
from infra.identity import verified
from infra.identity.directory import oidc_claims_unverified
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
from infra.sessions.oidc import issuer_forms
from infra.wiremodel import WireModel

FILTER_TYPES = (
    "CREDENTIAL_ID",
    "NAME",
    "USERNAME",
    "EMAIL",
    "PHONE_NUMBER",
    "OIDC_TOKEN",
    "WALLET_ACCOUNT_ADDRESS",
    "PUBLIC_KEY",
)


class Params(WireModel):
    """``v1GetSubOrgIdsRequest``."""

    organization_id: str
    filter_type: str | None = None
    filter_value: str | None = None
    pagination_options: Pagination | None = None


#: Filters naming a login identity: answered by the login rule (one holder at most).
IDENTITY_FILTERS = frozenset({"EMAIL", "PHONE_NUMBER", "OIDC_TOKEN", "PUBLIC_KEY"})


def _holders(filter_type: str, value: str) -> Any:
    """A select of organization ids holding something that matches the filter."""
    if filter_type == "NAME":
        return select(Organization.id).where(Organization.name == value)
    if filter_type == "USERNAME":
        return select(User.organization_id).where(User.name == value)
    if filter_type == "CREDENTIAL_ID":
        try:
            credential_id = normalize_credential_id(value)
        except ValueError as ex:
            raise InvalidRequest("filterValue is not a base64url credential id", field="filterValue") from ex
        return select(Authenticator.organization_id).where(Authenticator.credential_id == credential_id)
    return _address_holders(value)


def _identity(filter_type: str, value: str) -> tuple[verified.Kind, Any]:
    """The verified identity an ``EMAIL`` / ``PHONE_NUMBER`` / ``OIDC_TOKEN`` /
    ``PUBLIC_KEY`` filter names (the one rule logins use, ``infra.identity.verified``)."""
    if filter_type == "EMAIL":
        return "email", value
    if filter_type == "PHONE_NUMBER":
        return "phone", value
    if filter_type == "PUBLIC_KEY":
        return "public_key", value
    try:
        claims = oidc_claims_unverified(value)
    except ValueError as ex:
        raise InvalidRequest(f"filterValue is not an OIDC token: {ex}", field="filterValue") from ex
    aud = claims.get("aud")
    audiences = tuple(str(a) for a in (aud if isinstance(aud, list) else [aud]))
    return "oidc", (issuer_forms(str(claims.get("iss"))), str(claims.get("sub")), audiences)


def _identity_holder(ctx: QueryContext, params: Params) -> list[str]:
    """At most one sub-organization: the one a login with that identity lands in."""
    kind, value = _identity(str(params.filter_type), str(params.filter_value))
    found = verified.winner(ctx.session, params.organization_id, kind, value, include_self=False)
    if found is None and kind == "public_key":
        # A passkey's public key (its attestation proved it when it was registered).
        holder = ctx.session.scalar(
            select(Authenticator.organization_id).join(
                Organization, Organization.id == Authenticator.organization_id).where(
                Authenticator.public_key == value,
                Organization.parent_id == params.organization_id,
                Organization.id.not_in(select(DeletedOrganization.organization_id)))
            .order_by(Authenticator.created_at, Authenticator.id).limit(1))
        return [holder] if holder else []
    return [found[0]] if found else []


def _address_holders(address: str) -> Any:
    selects = []
    for name in ("wallet_accounts", "private_key_addresses"):
        table = Base.metadata.tables.get(name)
        if isinstance(table, Table) and {"organization_id", "address"} <= set(table.c.keys()):
            selects.append(select(table.c.organization_id).where(table.c.address == address))
    if not selects:
        return select(Organization.id).where(Organization.id.is_(None))
    return union(*selects) if len(selects) > 1 else selects[0]


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    stmt = select(Organization).where(
        Organization.parent_id == params.organization_id,
        Organization.id.not_in(select(DeletedOrganization.organization_id)),
    )
    if params.filter_type:
        if params.filter_type not in FILTER_TYPES:
            raise InvalidRequest(
                f"unknown filterType {params.filter_type!r}; use one of {', '.join(FILTER_TYPES)}",
                field="filterType",
            )
        if not params.filter_value:
            raise InvalidRequest("filterValue is required with filterType", field="filterValue")
        if params.filter_type in IDENTITY_FILTERS:
            return {"organizationIds": _identity_holder(ctx, params)}
        holders = _holders(params.filter_type, params.filter_value).subquery()
        stmt = stmt.where(Organization.id.in_(select(holders.c[0])))
    orgs = fetch_page(
        ctx.session, stmt, Organization.created_at, Organization.id, params.pagination_options, default=100
    )
    return {"organizationIds": [o.id for o in orgs]}


SPEC = QuerySpec(path="list_suborgs", params=Params, run=run)
