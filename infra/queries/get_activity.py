"""``get_activity``: one activity of the organization."""

from __future__ import annotations

from typing import Any

from infra.db.models.activities import Activity
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.views.activities import render_activity
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    activity_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    activity = ctx.session.get(Activity, params.activity_id)
    if activity is None or activity.organization_id != params.organization_id:
        raise NotFound(f"activity not found: {params.activity_id}")
    return {"activity": render_activity(ctx.session, activity, ctx.principal.user_id)}


SPEC = QuerySpec(path="get_activity", params=Params, run=run)
