"""``update_wallet``: rename a wallet."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateWalletIntent``."""

    wallet_id: str
    wallet_name: str | None = Field(default=None, max_length=256)


def _name(params: Params) -> str | None:
    if params.wallet_name is not None and not params.wallet_name.strip():
        raise InvalidRequest("walletName must not be empty; omit it to keep the current name",
                             field="walletName")
    return params.wallet_name


def check(params: Params, ctx: CheckContext) -> None:
    _name(params)
    store.wallet_in_org(ctx.session, ctx.organization_id, params.wallet_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    name = _name(params)
    wallet = store.wallet_in_org(ctx.session, ctx.organization_id, params.wallet_id)
    if name is not None:
        wallet.name = name
        wallet.version += 1
        wallet.updated_at = ctx.now
    return {"walletId": wallet.id}


SPEC = ActivitySpec(
    path="update_wallet",
    versions=(Version("ACTIVITY_TYPE_UPDATE_WALLET", Params, "updateWalletIntent",
                      "updateWalletResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="UPDATE",
)
