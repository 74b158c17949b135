"""``create_wallet``: a new BIP-39 wallet and its first accounts."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import hd
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1CreateWalletIntent``."""

    wallet_name: str = Field(max_length=256)
    accounts: list[store.AccountParams] = Field(default_factory=list)
    mnemonic_length: Any = None


def check(params: Params, ctx: CheckContext) -> None:
    hd.parse_mnemonic_length(params.mnemonic_length)
    store.validate_accounts(params.accounts)
    store.check_wallet_limit(ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    length = hd.parse_mnemonic_length(params.mnemonic_length)
    specs = store.validate_accounts(params.accounts)
    custody = custody_of(ctx.services)
    mnemonic_secret = hd.generate_mnemonic(length)
    wallet = store.create_wallet(ctx.session, custody, ctx.organization_id, params.wallet_name,
                                 mnemonic_secret)
    accounts = store.derive_accounts(ctx.session, wallet, mnemonic_secret, "", specs, ctx.now)
    return {"walletId": wallet.id, "addresses": [a.address for a in accounts]}


SPEC = ActivitySpec(
    path="create_wallet",
    versions=(Version("ACTIVITY_TYPE_CREATE_WALLET", Params, "createWalletIntent",
                      "createWalletResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="CREATE",
)
