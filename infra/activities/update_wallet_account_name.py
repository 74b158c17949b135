"""``update_wallet_account_name``: rename one wallet account."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.wallets import WalletAccount
from infra.errors import InvalidRequest, NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateWalletAccountNameIntent``."""

    wallet_account_id: str
    name: str = Field(max_length=256)


def _account(params: Params, session: Any, organization_id: str) -> WalletAccount:
    if not params.name.strip():
        raise InvalidRequest("name must not be empty", field="name")
    account = session.get(WalletAccount, params.wallet_account_id)
    if account is None or account.organization_id != organization_id:
        raise NotFound(f"wallet account not found: {params.wallet_account_id}")
    return account


def check(params: Params, ctx: CheckContext) -> None:
    _account(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    account = _account(params, ctx.session, ctx.organization_id)
    account.name = params.name
    account.updated_at = ctx.now
    return {"walletAccountId": account.id}


SPEC = ActivitySpec(
    path="update_wallet_account_name",
    versions=(Version("ACTIVITY_TYPE_UPDATE_WALLET_ACCOUNT_NAME", Params,
                      "updateWalletAccountNameIntent", "updateWalletAccountNameResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="UPDATE",
)
