"""``export_wallet_account``: one account's 32-byte private key, HPKE-encrypted to the caller."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import bundles, hpke
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1ExportWalletAccountIntent``."""

    address: str
    target_public_key: str


def check(params: Params, ctx: CheckContext) -> None:
    hpke.load_public_key(params.target_public_key)
    store.account_by_address(ctx.session, ctx.organization_id, params.address)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    hpke.load_public_key(params.target_public_key)
    custody = custody_of(ctx.services)
    account = store.account_by_address(ctx.session, ctx.organization_id, params.address)
    target = store.resolve_sign_with(ctx.session, ctx.organization_id, account.address)
    bundle = bundles.build_export_bundle(
        custody.signer(), organization_id=ctx.organization_id,
        plaintext=store.signing_secret(custody, target),
        target_public_key=params.target_public_key)
    return {"address": account.address, "exportBundle": bundle}


SPEC = ActivitySpec(
    path="export_wallet_account",
    versions=(Version("ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT", Params, "exportWalletAccountIntent",
                      "exportWalletAccountResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="EXPORT",
)
