"""``delete_wallets``: remove wallets (and their accounts and sealed seeds)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.wallets import Wallet, WalletAccount
from infra.messaging import queues
from infra.wallets import store
from infra.wallets.deletion import deletable, delete_secrets
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteWalletsIntent``."""

    wallet_ids: list[str] = Field(min_length=1)
    delete_without_export: bool | None = None


def _targets(params: Params, ctx: CheckContext | ActivityContext) -> list[Wallet]:
    return deletable(ctx.session, ctx.organization_id, params.wallet_ids, store.wallet_in_org,
                     noun="wallets", delete_without_export=params.delete_without_export)


def check(params: Params, ctx: CheckContext) -> None:
    _targets(params, ctx)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    return {"walletIds": delete_secrets(ctx.session, _targets(params, ctx),
                                        WalletAccount.wallet_id)}


SPEC = ActivitySpec(
    path="delete_wallets",
    versions=(Version("ACTIVITY_TYPE_DELETE_WALLETS", Params, "deleteWalletsIntent",
                      "deleteWalletsResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="DELETE",
)
