"""``list_wallet_accounts``: accounts of one wallet or of the whole organization (paged)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.wallets import Wallet, WalletAccount
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
from infra.wallets.store import wallet_in_org
from infra.wallets.views import render_account
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    wallet_id: str | None = None
    include_wallet_details: bool | None = None
    pagination_options: Pagination | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    stmt = select(WalletAccount).where(WalletAccount.organization_id == params.organization_id)
    if params.wallet_id:
        wallet_in_org(ctx.session, params.organization_id, params.wallet_id)
        stmt = stmt.where(WalletAccount.wallet_id == params.wallet_id)
    accounts = fetch_page(ctx.session, stmt, WalletAccount.created_at, WalletAccount.id,
                          params.pagination_options, default=100)
    wallets: dict[str, Wallet] = {}
    if params.include_wallet_details and accounts:
        ids = {a.wallet_id for a in accounts}
        wallets = {w.id: w for w in ctx.session.scalars(select(Wallet).where(Wallet.id.in_(ids)))}
    return {"accounts": [render_account(a, wallets.get(a.wallet_id)) for a in accounts]}


SPEC = QuerySpec(path="list_wallet_accounts", params=Params, run=run)
