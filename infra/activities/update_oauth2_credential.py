"""``update_oauth2_credential``: replace an OAuth 2.0 credential's provider, client id, secret."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.messaging import queues
from infra.sessions.oauth2 import (
    MAX_SECRET_ENVELOPE_LENGTH,
    Oauth2ProviderName,
    find_credential,
    open_client_secret,
    store_credential,
)
from infra.wiremodel import WireModel
from infra.worker_services import custody_of, service_keys


class Params(WireModel):
    """``v1UpdateOauth2CredentialIntent``."""

    oauth2_credential_id: str = Field(min_length=1, max_length=64)
    provider: Oauth2ProviderName
    client_id: str = Field(min_length=1, max_length=512)
    encrypted_client_secret: str = Field(min_length=1, max_length=MAX_SECRET_ENVELOPE_LENGTH)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = find_credential(ctx.session, [ctx.organization_id], params.oauth2_credential_id)
    secret = open_client_secret(service_keys(ctx.services), ctx.session,
                                params.encrypted_client_secret)
    row.provider, row.client_id, row.updated_at = params.provider, params.client_id, ctx.now
    store_credential(custody_of(ctx.services), row, params.encrypted_client_secret, secret)
    ctx.session.flush()
    return {"oauth2CredentialId": row.id}


SPEC = ActivitySpec(
    path="update_oauth2_credential",
    versions=(Version("ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL", Params,
                      "updateOauth2CredentialIntent", "updateOauth2CredentialResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="AUTH",  # language.mdx "Activity types by resource and action"
    action="UPDATE",
)
