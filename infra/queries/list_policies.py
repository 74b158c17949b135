"""``list_policies``: every policy of the organization, oldest first."""

from __future__ import annotations

from typing import Any

from infra.queries.spec import QueryContext, QuerySpec
from infra.stored_policies import org_policies, render_policy
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    return {"policies": [render_policy(p) for p in org_policies(ctx.session, params.organization_id)]}


SPEC = QuerySpec(path="list_policies", params=Params, run=run)
