"""``get_user``: one user of the organization."""

from __future__ import annotations

from typing import Any

from infra.db.models.organizations import User
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.views.users import render_user
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    user_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    user = ctx.session.get(User, params.user_id)
    if user is None or user.organization_id != params.organization_id:
        raise NotFound(f"user not found: {params.user_id}")
    return {"user": render_user(ctx.session, user)}


SPEC = QuerySpec(path="get_user", params=Params, run=run)
