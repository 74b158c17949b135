"""``whoami``: the organization and user behind the stamp.

Addressed to a parent organization, a credential of one of its sub-organizations resolves to
that sub-organization, so clients find a user's sub-organization from the parent's id.
"""

from __future__ import annotations

from typing import Any

from infra.db.models.organizations import Organization, User
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    user = ctx.session.get(User, ctx.principal.user_id)
    org = ctx.session.get(Organization, ctx.principal.organization_id)
    if user is None or org is None:
        raise NotFound("user not found")
    return {"organizationId": org.id, "organizationName": org.name, "userId": user.id,
            "username": user.name}


#: A sub-organization's credential stamping for its parent's id answers as the
#: sub-organization (PROTOCOL.md §1.4).
SPEC = QuerySpec(path="whoami", params=Params, run=run, sub_organization_credentials=True)
