"""``get_wallet_account``: one account of a wallet, by address or by path."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.wallets import WalletAccount
from infra.errors import InvalidRequest, NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wallets.store import wallet_in_org
from infra.wallets.views import render_account
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    wallet_id: str
    address: str | None = None
    path: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    wallet_in_org(ctx.session, params.organization_id, params.wallet_id)
    if not params.address and not params.path:
        raise InvalidRequest("send the account's address or its path", field="address")
    stmt = select(WalletAccount).where(WalletAccount.wallet_id == params.wallet_id)
    if params.address:
        stmt = stmt.where(WalletAccount.address == params.address)
    if params.path:
        stmt = stmt.where(WalletAccount.path == params.path)
    account = ctx.session.scalars(stmt.order_by(WalletAccount.created_at).limit(1)).first()
    if account is None:
        raise NotFound(f"wallet account not found in wallet {params.wallet_id}")
    return {"account": render_account(account)}


SPEC = QuerySpec(path="get_wallet_account", params=Params, run=run)
