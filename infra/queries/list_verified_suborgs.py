"""``list_verified_suborgs``: sub-organizations holding a *verified* email or phone number.

With ``filterType`` ``EMAIL`` or ``PHONE_NUMBER``: the sub-organizations whose users hold that
contact verified (a spent verification token for exactly that value, or bound by the operator:
``infra.identity.verified``), the one a login would land in first, then in the order the
bindings were verified. Without a filter: every live sub-organization with at least one
verified contact, oldest first. An unverified copy of a contact is never listed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, or_, select

from infra.db.models.identity import DeletedOrganization
from infra.db.models.organizations import Organization, User
from infra.errors import InvalidRequest
from infra.identity import verified
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel

FILTERS: dict[str, verified.Kind] = {"EMAIL": "email", "PHONE_NUMBER": "phone"}


class Params(WireModel):
    """``v1GetVerifiedSubOrgIdsRequest``."""

    organization_id: str
    filter_type: str | None = None
    filter_value: str | None = None
    pagination_options: Pagination | None = None


def _page(ids: list[str], page: Pagination | None) -> list[str]:
    page = page or Pagination()
    size = page.size()
    cursor = page.after or page.before
    if cursor and cursor not in ids:
        raise InvalidRequest(f"pagination cursor {cursor!r} does not name a listed organization",
                             field="paginationOptions")
    if page.after:
        return ids[ids.index(page.after) + 1:][:size]
    if page.before:
        start = ids.index(page.before)
        return ids[max(0, start - size):start]
    return ids[:size]


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    if params.filter_type:
        kind = FILTERS.get(params.filter_type)
        if kind is None:
            raise InvalidRequest("filterType must be EMAIL or PHONE_NUMBER", field="filterType")
        if not params.filter_value:
            raise InvalidRequest("filterValue is required with filterType", field="filterValue")
        found = verified.holders(ctx.session, params.organization_id, kind, params.filter_value,
                                 include_self=False)
        ids = list(dict.fromkeys(org for org, _user in found))
        return {"organizationIds": _page(ids, params.pagination_options)}
    has_verified = exists(select(User.id).where(
        User.organization_id == Organization.id,
        or_(User.email_verified_at.is_not(None), User.phone_verified_at.is_not(None))))
    stmt = select(Organization).where(
        Organization.parent_id == params.organization_id,
        Organization.id.not_in(select(DeletedOrganization.organization_id)), has_verified)
    rows = fetch_page(ctx.session, stmt, Organization.created_at, Organization.id,
                      params.pagination_options)
    return {"organizationIds": [r.id for r in rows]}


SPEC = QuerySpec(path="list_verified_suborgs", params=Params, run=run)
