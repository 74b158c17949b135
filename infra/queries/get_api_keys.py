"""``get_api_keys``: the organization's API keys, optionally of one user."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.organizations import ApiKey
from infra.queries.spec import QueryContext, QuerySpec
from infra.views.users import render_api_key
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    user_id: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    stmt = select(ApiKey).where(ApiKey.organization_id == params.organization_id)
    if params.user_id:
        stmt = stmt.where(ApiKey.user_id == params.user_id)
    keys = ctx.session.scalars(stmt.order_by(ApiKey.created_at, ApiKey.id)).all()
    return {"apiKeys": [render_api_key(k) for k in keys]}


SPEC = QuerySpec(path="get_api_keys", params=Params, run=run)
