"""``list_users``: every user of the organization."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.organizations import User
from infra.queries.spec import QueryContext, QuerySpec
from infra.views.users import render_users
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    users = ctx.session.scalars(
        select(User).where(User.organization_id == params.organization_id)
        .order_by(User.created_at, User.id)).all()
    return {"users": render_users(ctx.session, users)}


SPEC = QuerySpec(path="list_users", params=Params, run=run)
