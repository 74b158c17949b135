"""``delete_wallets``: remove wallets (and their accounts and sealed seeds)."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import delete

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.wallets import WalletAccount
from infra.errors import FailedPrecondition
from infra.messaging import queues
from infra.validation import caps
from infra.wallets import store
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteWalletsIntent``."""

    wallet_ids: list[str] = Field(min_length=1, max_length=caps.IDS)
    delete_without_export: bool | None = None


def _targets(params: Params, session: Any, organization_id: str) -> list[Any]:
    wallets = [store.wallet_in_org(session, organization_id, w) for w in params.wallet_ids]
    if not params.delete_without_export:
        unexported = [w.id for w in wallets if not w.exported]
        if unexported:
            raise FailedPrecondition(
                f"wallets not exported yet: {', '.join(unexported)}; export them first or "
                "send deleteWithoutExport: true"
            )
    return wallets


def check(params: Params, ctx: CheckContext) -> None:
    _targets(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    wallets = _targets(params, ctx.session, ctx.organization_id)
    for wallet in wallets:
        ctx.session.execute(delete(WalletAccount).where(WalletAccount.wallet_id == wallet.id))
        ctx.session.delete(wallet)
    ctx.session.flush()
    return {"walletIds": [w.id for w in wallets]}


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
