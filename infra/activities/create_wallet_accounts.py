"""``create_wallet_accounts``: derive more accounts of an existing wallet."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1CreateWalletAccountsIntent``."""

    wallet_id: str
    accounts: list[store.AccountParams] = Field(min_length=1)
    persist: bool | None = None


def check(params: Params, ctx: CheckContext) -> None:
    store.validate_accounts(params.accounts)
    store.wallet_in_org(ctx.session, ctx.organization_id, params.wallet_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    specs = store.validate_accounts(params.accounts)
    wallet = store.wallet_in_org(ctx.session, ctx.organization_id, params.wallet_id)
    mnemonic_secret, passphrase_secret = store.open_wallet(custody_of(ctx.services), wallet)
    accounts = store.derive_accounts(ctx.session, wallet, mnemonic_secret, passphrase_secret,
                                     specs, ctx.now)
    return {"addresses": [a.address for a in accounts]}


SPEC = ActivitySpec(
    path="create_wallet_accounts",
    versions=(Version("ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS", Params,
                      "createWalletAccountsIntent", "createWalletAccountsResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="CREATE",
)
