"""``list_private_keys``: the organization's standalone private keys."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.wallets import PrivateKey
from infra.queries.spec import QueryContext, QuerySpec
from infra.wallets.views import render_private_key
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    keys = ctx.session.scalars(
        select(PrivateKey).where(PrivateKey.organization_id == params.organization_id)
        .order_by(PrivateKey.created_at, PrivateKey.id)).all()
    return {"privateKeys": [render_private_key(k) for k in keys]}


SPEC = QuerySpec(path="list_private_keys", params=Params, run=run)
