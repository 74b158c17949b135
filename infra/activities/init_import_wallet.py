"""``init_import_wallet``: a signed import bundle naming a fresh HPKE target key."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.clock import new_id
from infra.crypto import bundles, hpke
from infra.db.models.wallets import ImportTarget
from infra.errors import PermissionDenied
from infra.messaging import queues
from infra.wiremodel import WireModel
from infra.worker_services import custody_of

KIND = "wallet"


class Params(WireModel):
    """``v1InitImportWalletIntent``."""

    user_id: str


def own_user(params_user_id: str, caller_user_id: str | None) -> None:
    """Imports must target the caller's own user (PROTOCOL.md §8.4 hard denial)."""
    if caller_user_id is not None and params_user_id != caller_user_id:
        raise PermissionDenied("import requests must target your own user; send your userId")


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)


def new_target(ctx: ActivityContext, user_id: str, kind: str) -> str:
    """Replace the user's import target of ``kind`` and return the signed import bundle."""
    custody = custody_of(ctx.services)
    ctx.session.execute(delete(ImportTarget).where(
        ImportTarget.organization_id == ctx.organization_id, ImportTarget.user_id == user_id,
        ImportTarget.kind == kind))
    key = hpke.generate_private_key()
    public = hpke.uncompressed(key.public_key())
    target = ImportTarget(id=new_id(), organization_id=ctx.organization_id, user_id=user_id,
                          kind=kind, public_key=public.hex(), created_at=ctx.now)
    custody.seal_row(target, hpke.private_key_to_bytes(key))
    ctx.session.add(target)
    ctx.session.flush()
    return bundles.build_import_bundle(custody.signer(), organization_id=ctx.organization_id,
                                       user_id=user_id, target_public_key=public)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)
    return {"importBundle": new_target(ctx, params.user_id, KIND)}


SPEC = ActivitySpec(
    path="init_import_wallet",
    versions=(Version("ACTIVITY_TYPE_INIT_IMPORT_WALLET", Params, "initImportWalletIntent",
                      "initImportWalletResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="IMPORT",
)
