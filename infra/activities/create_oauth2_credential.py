"""``create_oauth2_credential``: register an OAuth 2.0 provider's client id and secret.

``encryptedClientSecret`` is the client secret encrypted to the service's encryption key
(``@turnkey/crypto`` ``encryptOauth2ClientSecret`` with ``encryptionPublicKey`` from
``/public/v1/discovery/keys``). The worker opens it and seals the secret under the master key;
``oauth2_authenticate`` uses it to exchange authorization codes. The client id also becomes an
accepted OIDC audience of the organization.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.clock import new_id
from infra.db.models.oauth import Oauth2Credential
from infra.messaging import queues
from infra.sessions.oauth2 import (
    MAX_SECRET_ENVELOPE_LENGTH,
    Oauth2ProviderName,
    open_client_secret,
    store_credential,
)
from infra.wiremodel import WireModel
from infra.worker_services import custody_of, service_keys


class Params(WireModel):
    """``v1CreateOauth2CredentialIntent``."""

    provider: Oauth2ProviderName
    client_id: str = Field(min_length=1, max_length=512)
    encrypted_client_secret: str = Field(min_length=1, max_length=MAX_SECRET_ENVELOPE_LENGTH)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    secret = open_client_secret(service_keys(ctx.services), ctx.session,
                                params.encrypted_client_secret)
    row = Oauth2Credential(id=new_id(), organization_id=ctx.organization_id,
                           provider=params.provider, client_id=params.client_id,
                           created_at=ctx.now, updated_at=ctx.now)
    store_credential(custody_of(ctx.services), row, params.encrypted_client_secret, secret)
    ctx.session.add(row)
    ctx.session.flush()
    return {"oauth2CredentialId": row.id}


SPEC = ActivitySpec(
    path="create_oauth2_credential",
    versions=(Version("ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL", Params,
                      "createOauth2CredentialIntent", "createOauth2CredentialResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="AUTH",  # language.mdx "Activity types by resource and action"
    action="CREATE",
)
