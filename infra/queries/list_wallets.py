"""``list_wallets``: the organization's wallets."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.wallets import Wallet
from infra.queries.spec import QueryContext, QuerySpec
from infra.wallets.views import render_wallet
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    wallets = ctx.session.scalars(
        select(Wallet).where(Wallet.organization_id == params.organization_id)
        .order_by(Wallet.created_at, Wallet.id)).all()
    return {"wallets": [render_wallet(w) for w in wallets]}


SPEC = QuerySpec(path="list_wallets", params=Params, run=run)
