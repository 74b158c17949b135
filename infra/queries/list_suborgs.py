"""``list_suborgs``: ids of the organization's sub-organizations, optionally filtered.

Filters (``filterType`` / ``filterValue``), each matching a sub-organization that holds:
``NAME`` (its name), ``USERNAME`` / ``EMAIL`` (case-insensitive) / ``PHONE_NUMBER`` (a user),
``CREDENTIAL_ID`` (a passkey), ``PUBLIC_KEY`` (an API key or passkey key), ``OIDC_TOKEN``
(an OAuth provider with the token's iss/sub/aud) or ``WALLET_ACCOUNT_ADDRESS`` (a wallet
account or private-key address). Deleted sub-organizations are not listed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, func, select, union

from infra.auth.webauthn import normalize_credential_id
from infra.db.base import Base
from infra.db.models.identity import Authenticator, DeletedOrganization, OauthProvider
from infra.db.models.organizations import ApiKey, Organization, User
from infra.errors import InvalidRequest
from infra.identity.directory import oidc_claims_unverified
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
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


def _holders(filter_type: str, value: str) -> Any:
    """A select of organization ids holding something that matches the filter."""
    if filter_type == "NAME":
        return select(Organization.id).where(Organization.name == value)
    if filter_type == "USERNAME":
        return select(User.organization_id).where(User.name == value)
    if filter_type == "EMAIL":
        return select(User.organization_id).where(func.lower(User.email) == value.lower())
    if filter_type == "PHONE_NUMBER":
        return select(User.organization_id).where(User.phone_number == value)
    if filter_type == "CREDENTIAL_ID":
        try:
            credential_id = normalize_credential_id(value)
        except ValueError as ex:
            raise InvalidRequest("filterValue is not a base64url credential id", field="filterValue") from ex
        return select(Authenticator.organization_id).where(Authenticator.credential_id == credential_id)
    if filter_type == "PUBLIC_KEY":
        return (
            select(ApiKey.organization_id)
            .where(ApiKey.public_key == value.lower())
            .union(select(Authenticator.organization_id).where(Authenticator.public_key == value))
        )
    if filter_type == "OIDC_TOKEN":
        try:
            claims = oidc_claims_unverified(value)
        except ValueError as ex:
            raise InvalidRequest(f"filterValue is not an OIDC token: {ex}", field="filterValue") from ex
        aud = claims.get("aud")
        audiences = aud if isinstance(aud, list) else [aud]
        return select(OauthProvider.organization_id).where(
            OauthProvider.issuer == str(claims.get("iss")),
            OauthProvider.subject == str(claims.get("sub")),
            OauthProvider.audience.in_([str(a) for a in audiences]),
        )
    return _address_holders(value)


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
        holders = _holders(params.filter_type, params.filter_value).subquery()
        stmt = stmt.where(Organization.id.in_(select(holders.c[0])))
    orgs = fetch_page(
        ctx.session, stmt, Organization.created_at, Organization.id, params.pagination_options, default=100
    )
    return {"organizationIds": [o.id for o in orgs]}


SPEC = QuerySpec(path="list_suborgs", params=Params, run=run)
