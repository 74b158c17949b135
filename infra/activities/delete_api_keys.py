"""``delete_api_keys``: remove API keys of a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import owned_by_user
from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.db.models.organizations import ApiKey
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteApiKeysIntent``."""

    user_id: str
    api_key_ids: list[str] = Field(min_length=1, max_length=caps.IDS)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    keys = owned_by_user(ctx.session, ApiKey, ctx.organization_id, params.user_id,
                         params.api_key_ids, "api keys")
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
