"""``export_wallet``: the mnemonic HPKE-encrypted to the caller's target key."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import bundles, hpke
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of

ENGLISH = "MNEMONIC_LANGUAGE_ENGLISH"


class Params(WireModel):
    """``v1ExportWalletIntent``."""

    wallet_id: str
    target_public_key: str
    language: str | None = None


def _validate(params: Params) -> None:
    if params.language not in (None, "", ENGLISH):
        raise InvalidRequest(
            f"language {params.language!r} is not supported; send {ENGLISH} or omit it",
            field="language",
        )
    hpke.load_public_key(params.target_public_key)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params)
    store.wallet_in_org(ctx.session, ctx.organization_id, params.wallet_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params)
    custody = custody_of(ctx.services)
    wallet = store.wallet_in_org(ctx.session, ctx.organization_id, params.wallet_id)
    bundle = bundles.build_export_bundle(
        custody.signer(),
        organization_id=ctx.organization_id,
        plaintext=custody.open_row(wallet),
        target_public_key=params.target_public_key,
    )
    wallet.exported = True
    wallet.version += 1
    return {"walletId": wallet.id, "exportBundle": bundle}


SPEC = ActivitySpec(
    path="export_wallet",
    versions=(Version("ACTIVITY_TYPE_EXPORT_WALLET", Params, "exportWalletIntent",
                      "exportWalletResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="EXPORT",
)
