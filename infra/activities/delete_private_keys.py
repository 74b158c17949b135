"""``delete_private_keys``: remove standalone keys (and their sealed secrets)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.wallets import PrivateKey, PrivateKeyAddress
from infra.messaging import queues
from infra.wallets import store
from infra.wallets.deletion import deletable, delete_secrets
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeletePrivateKeysIntent``."""

    private_key_ids: list[str] = Field(min_length=1)
    delete_without_export: bool | None = None


def _targets(params: Params, ctx: CheckContext | ActivityContext) -> list[PrivateKey]:
    return deletable(ctx.session, ctx.organization_id, params.private_key_ids,
                     store.private_key_in_org, noun="private keys",
                     delete_without_export=params.delete_without_export)


def check(params: Params, ctx: CheckContext) -> None:
    _targets(params, ctx)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    return {"privateKeyIds": delete_secrets(ctx.session, _targets(params, ctx),
                                            PrivateKeyAddress.private_key_id)}


SPEC = ActivitySpec(
    path="delete_private_keys",
    versions=(Version("ACTIVITY_TYPE_DELETE_PRIVATE_KEYS", Params, "deletePrivateKeysIntent",
                      "deletePrivateKeysResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="DELETE",
)
