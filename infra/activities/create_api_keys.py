"""``create_api_keys``: add API keys to a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.credentials import ApiKeyParams, add_api_key, canonical_public_key
from infra.identity.verified import is_operator
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateApiKeysIntentV2``."""

    api_keys: list[ApiKeyParams] = Field(min_length=1, max_length=caps.CREDENTIALS_PER_USER)
    user_id: str


def check(params: Params, ctx: CheckContext) -> None:
    for i, key in enumerate(params.api_keys):
        canonical_public_key(key, f"parameters.apiKeys[{i}].publicKey")
    user_in_org(ctx.session, ctx.organization_id, params.user_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    keys = [add_api_key(ctx.session, ctx.organization_id, params.user_id, key, ctx.now,
                        f"parameters.apiKeys[{i}]")
            for i, key in enumerate(params.api_keys)]
    # No proof of possession travels with a new key: it stamps in its organization, but it
    # is a login identity (found from a parent) only when the operator adds it.
    if is_operator(ctx.session, ctx.user_id):
        for key in keys:
            key.login_verified_at = ctx.now
    return {"apiKeyIds": [key.id for key in keys]}


SPEC = ActivitySpec(
    path="create_api_keys",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_API_KEYS_V2", Params, "createApiKeysIntentV2",
                "createApiKeysResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="CREDENTIAL",
    action="CREATE",
)
