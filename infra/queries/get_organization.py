"""``get_organization``: the organization with its users, quorum and features.

Other concepts' lists (wallets, policies, private keys, invitations, tags, …) come from the
sections in ``ORGANIZATION_SECTIONS`` below: ``section(session, org_id) -> {wire_key: value}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.organizations import Organization, OrganizationFeature, User
from infra.errors import NotFound
from infra.identity.directory import organization_section as identity_section
from infra.queries.spec import QueryContext, QuerySpec
from infra.stored_policies import organization_section as policies_section
from infra.views.users import render_users
from infra.wallets.sections import organization_section as wallets_section
from infra.wiremodel import WireModel

#: Sections of ``v1OrganizationData`` beyond the organization's own columns, in order:
#: ``section(session, org_id) -> {wire_key: value}``.
ORGANIZATION_SECTIONS: Final[tuple[Callable[[Session, str], dict[str, Any]], ...]] = (
    policies_section,              # policies
    identity_section,              # tags, invitations, smartContractInterfaceReferences
    wallets_section,               # wallets, privateKeys
)


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
