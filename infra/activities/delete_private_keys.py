"""``delete_private_keys``: remove standalone keys (and their sealed secrets)."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import delete

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.wallets import PrivateKey, PrivateKeyAddress
from infra.errors import FailedPrecondition
from infra.messaging import queues
from infra.validation import caps
from infra.wallets import store
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeletePrivateKeysIntent``."""

    private_key_ids: list[str] = Field(min_length=1, max_length=caps.IDS)
    delete_without_export: bool | None = None


def _targets(params: Params, session: Any, organization_id: str) -> list[PrivateKey]:
    keys = [store.private_key_in_org(session, organization_id, k) for k in params.private_key_ids]
    if not params.delete_without_export:
        unexported = [k.id for k in keys if not k.exported]
        if unexported:
            raise FailedPrecondition(
                f"private keys not exported yet: {', '.join(unexported)}; export them first or "
                "send deleteWithoutExport: true"
            )
    return keys


def check(params: Params, ctx: CheckContext) -> None:
    _targets(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    keys = _targets(params, ctx.session, ctx.organization_id)
    for key in keys:
        ctx.session.execute(delete(PrivateKeyAddress).where(PrivateKeyAddress.private_key_id == key.id))
        ctx.session.delete(key)
    ctx.session.flush()
    return {"privateKeyIds": [k.id for k in keys]}


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
