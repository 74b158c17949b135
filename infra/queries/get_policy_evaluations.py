"""``get_policy_evaluations``: every stored engine run on an activity, oldest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.activities import Activity
from infra.db.models.policies import PolicyEvaluation
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.stored_policies import render_evaluation
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    activity_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    activity = ctx.session.get(Activity, params.activity_id)
    if activity is None or activity.organization_id != params.organization_id:
        raise NotFound(f"activity not found: {params.activity_id}")
    rows = ctx.session.scalars(
        select(PolicyEvaluation)
        .where(PolicyEvaluation.activity_id == activity.id)
        .order_by(PolicyEvaluation.created_at, PolicyEvaluation.id)
    )
    return {"policyEvaluations": [render_evaluation(r) for r in rows]}


SPEC = QuerySpec(path="get_policy_evaluations", params=Params, run=run)
