"""``delete_wallet_accounts``: remove derived accounts (the wallet and its seed stay)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.wallets import Wallet, WalletAccount
from infra.errors import FailedPrecondition, NotFound
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteWalletAccountsIntent``."""

    wallet_account_ids: list[str] = Field(min_length=1, max_length=caps.IDS)
    delete_without_export: bool | None = None


def _targets(params: Params, session: Any, organization_id: str) -> list[WalletAccount]:
    accounts = []
    for account_id in dict.fromkeys(params.wallet_account_ids):
        account = session.get(WalletAccount, account_id)
        if account is None or account.organization_id != organization_id:
            raise NotFound(f"wallet account not found: {account_id}")
        accounts.append(account)
    if not params.delete_without_export:
        unexported = [a.id for a in accounts if not session.get(Wallet, a.wallet_id).exported]
        if unexported:
            raise FailedPrecondition(
                f"wallet accounts of unexported wallets: {', '.join(unexported)}; export the "
                "wallet (or the accounts) first or send deleteWithoutExport: true"
            )
    return accounts


def check(params: Params, ctx: CheckContext) -> None:
    _targets(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    accounts = _targets(params, ctx.session, ctx.organization_id)
    for account in accounts:
        ctx.session.delete(account)
    ctx.session.flush()
    return {"walletAccountIds": [a.id for a in accounts]}


SPEC = ActivitySpec(
    path="delete_wallet_accounts",
    versions=(Version("ACTIVITY_TYPE_DELETE_WALLET_ACCOUNTS", Params,
                      "deleteWalletAccountsIntent", "deleteWalletAccountsResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="DELETE",
)
