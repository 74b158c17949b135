"""``get_organization``: the organization with its users, quorum and features.

Other concepts add their lists (wallets, policies, private keys, invitations, tags, …)
through ``ORGANIZATION_SECTIONS``: ``section(session, org_id) -> {wire_key: value}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.organizations import Organization, OrganizationFeature, User
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.views.users import render_users
from infra.wiremodel import WireModel

ORGANIZATION_SECTIONS: list[Callable[[Session, str], dict[str, Any]]] = []


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    org = ctx.session.get(Organization, params.organization_id)
    if org is None:
        raise NotFound(f"organization not found: {params.organization_id}")
    users = ctx.session.scalars(
        select(User).where(User.organization_id == org.id).order_by(User.created_at)).all()
    features = ctx.session.scalars(
        select(OrganizationFeature).where(OrganizationFeature.organization_id == org.id)
        .order_by(OrganizationFeature.name)).all()
    data: dict[str, Any] = {
        "organizationId": org.id,
        "name": org.name,
        "users": render_users(ctx.session, users),
        "policies": [],
        "privateKeys": [],
        "invitations": [],
        "tags": [],
        "rootQuorum": {"threshold": org.root_quorum_threshold,
                       "userIds": [u.id for u in users if u.is_root]},
        "features": [{"name": f.name, "value": f.value} for f in features],
        "wallets": [],
        "smartContractInterfaceReferences": [],
    }
    for section in ORGANIZATION_SECTIONS:
        data.update(section(ctx.session, org.id))
    return {"organizationData": data}


SPEC = QuerySpec(path="get_organization", params=Params, run=run)
