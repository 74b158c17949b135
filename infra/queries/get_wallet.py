"""``get_wallet``: one wallet."""

from __future__ import annotations

from typing import Any

from infra.queries.spec import QueryContext, QuerySpec
from infra.wallets.store import wallet_in_org
from infra.wallets.views import render_wallet
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    wallet_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    return {"wallet": render_wallet(wallet_in_org(ctx.session, params.organization_id,
                                                  params.wallet_id))}


SPEC = QuerySpec(path="get_wallet", params=Params, run=run)
