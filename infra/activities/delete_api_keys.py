"""``delete_api_keys``: remove API keys of a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.db.models.organizations import ApiKey
from infra.errors import NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteApiKeysIntent``."""

    user_id: str
    api_key_ids: list[str] = Field(min_length=1)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    keys = ctx.session.scalars(select(ApiKey).where(
        ApiKey.id.in_(params.api_key_ids), ApiKey.user_id == params.user_id)).all()
    missing = set(params.api_key_ids) - {k.id for k in keys}
    if missing:
        raise NotFound(f"api keys not found for user {params.user_id}: {', '.join(sorted(missing))}")
    for key in keys:
        ctx.session.delete(key)
    return {"apiKeyIds": list(params.api_key_ids)}


SPEC = ActivitySpec(
    path="delete_api_keys",
    versions=(Version("ACTIVITY_TYPE_DELETE_API_KEYS", Params, "deleteApiKeysIntent",
                      "deleteApiKeysResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="CREDENTIAL",
    action="DELETE",
)
