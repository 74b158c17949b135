"""``whoami``: the organization and user behind the stamp."""

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


SPEC = QuerySpec(path="whoami", params=Params, run=run)
