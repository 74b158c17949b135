"""``create_api_keys``: add API keys to a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.access import issuance
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


def _bounded(key: ApiKeyParams, grant: issuance.Grant) -> ApiKeyParams:
    """``key`` with its ``expirationSeconds`` within the grant's bound (if it has one)."""
    if grant.seconds is None:
        return key
    asked = int(key.expiration_seconds) if key.expiration_seconds else grant.seconds
    return key.model_copy(update={"expiration_seconds": str(grant.lifetime(asked))})


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    # Keys made by a profiled session keep its profile and its bound; keys made by an API
    # key or session of the same user descend from it (infra.access.issuance).
    grant = issuance.grant(ctx.session, ctx.activity, user_id=params.user_id,
                           organization_id=ctx.organization_id, seconds=None)
    keys = [add_api_key(ctx.session, ctx.organization_id, params.user_id, _bounded(key, grant),
                        ctx.now, f"parameters.apiKeys[{i}]")
            for i, key in enumerate(params.api_keys)]
    for key in keys:
        key.session_profile_id = grant.profile_id
        key.lineage_root_id = grant.lineage_root_id
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
