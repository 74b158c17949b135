"""``export_private_key``: the raw 32-byte key HPKE-encrypted to the caller's target key."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import bundles, hpke
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1ExportPrivateKeyIntent``."""

    private_key_id: str
    target_public_key: str


def check(params: Params, ctx: CheckContext) -> None:
    hpke.load_public_key(params.target_public_key)
    store.private_key_in_org(ctx.session, ctx.organization_id, params.private_key_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    hpke.load_public_key(params.target_public_key)
    custody = custody_of(ctx.services)
    key = store.private_key_in_org(ctx.session, ctx.organization_id, params.private_key_id)
    bundle = bundles.build_export_bundle(
        custody.signer(), organization_id=ctx.organization_id,
        plaintext=custody.open_row(key), target_public_key=params.target_public_key)
    key.exported = True
    key.version += 1
    return {"privateKeyId": key.id, "exportBundle": bundle}


SPEC = ActivitySpec(
    path="export_private_key",
    versions=(Version("ACTIVITY_TYPE_EXPORT_PRIVATE_KEY", Params, "exportPrivateKeyIntent",
                      "exportPrivateKeyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="EXPORT",
)
