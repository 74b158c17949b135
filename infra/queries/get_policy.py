"""``get_policy``: one policy of the organization."""

from __future__ import annotations

from typing import Any

from infra.queries.spec import QueryContext, QuerySpec
from infra.stored_policies import policy_in_org, render_policy
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    policy_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    return {"policy": render_policy(policy_in_org(ctx.session, params.organization_id, params.policy_id))}


SPEC = QuerySpec(path="get_policy", params=Params, run=run)
