"""``get_authenticators``: the passkeys of one user."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.activities.common import user_in_org
from infra.db.models.identity import Authenticator
from infra.identity.passkeys import render_authenticator
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    user_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    user_in_org(ctx.session, params.organization_id, params.user_id)
    rows = ctx.session.scalars(
        select(Authenticator)
        .where(Authenticator.user_id == params.user_id)
        .order_by(Authenticator.created_at, Authenticator.id)
    )
    return {"authenticators": [render_authenticator(r) for r in rows]}


SPEC = QuerySpec(path="get_authenticators", params=Params, run=run)
