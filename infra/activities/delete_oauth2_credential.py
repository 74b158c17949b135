"""``delete_oauth2_credential``: forget an OAuth 2.0 client id and its sealed secret."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.messaging import queues
from infra.sessions.oauth2 import find_credential
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteOauth2CredentialIntent``."""

    oauth2_credential_id: str = Field(min_length=1, max_length=64)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = find_credential(ctx.session, [ctx.organization_id], params.oauth2_credential_id)
    ctx.session.delete(row)
    ctx.session.flush()
    return {"oauth2CredentialId": params.oauth2_credential_id}


SPEC = ActivitySpec(
    path="delete_oauth2_credential",
    versions=(Version("ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL", Params,
                      "deleteOauth2CredentialIntent", "deleteOauth2CredentialResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="AUTH",  # language.mdx "Activity types by resource and action"
    action="DELETE",
)
