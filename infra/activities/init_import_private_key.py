"""``init_import_private_key``: a signed import bundle for a standalone private key."""

from __future__ import annotations

from typing import Any

from infra.activities.common import user_in_org
from infra.activities.init_import_wallet import new_target, own_user
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.wiremodel import WireModel

KIND = "private_key"


class Params(WireModel):
    """``v1InitImportPrivateKeyIntent``."""

    user_id: str


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)
    return {"importBundle": new_target(ctx, params.user_id, KIND)}


SPEC = ActivitySpec(
    path="init_import_private_key",
    versions=(Version("ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY", Params,
                      "initImportPrivateKeyIntent", "initImportPrivateKeyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="IMPORT",
)
