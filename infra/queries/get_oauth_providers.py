"""``get_oauth_providers``: OAuth providers of one user, or of the whole organization."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.activities.common import user_in_org
from infra.db.models.identity import OauthProvider
from infra.identity.directory import render_oauth_provider
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    user_id: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    stmt = select(OauthProvider).where(OauthProvider.organization_id == params.organization_id)
    if params.user_id:
        user_in_org(ctx.session, params.organization_id, params.user_id)
        stmt = stmt.where(OauthProvider.user_id == params.user_id)
    rows = ctx.session.scalars(stmt.order_by(OauthProvider.created_at, OauthProvider.id))
    return {"oauthProviders": [render_oauth_provider(r) for r in rows]}


SPEC = QuerySpec(path="get_oauth_providers", params=Params, run=run)
