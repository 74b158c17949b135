"""``delete_oauth_providers``: unbind OIDC identities from a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from infra.activities.common import owned_by_user
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import OauthProvider
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteOauthProvidersIntent``."""

    user_id: str
    provider_ids: list[str] = Field(min_length=1, max_length=caps.IDS)


def _find(params: Params, session: Session, organization_id: str) -> list[OauthProvider]:
    return owned_by_user(session, OauthProvider, organization_id, params.user_id, params.provider_ids,
                         "OAuth providers")


def check(params: Params, ctx: CheckContext) -> None:
    _find(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    for row in _find(params, ctx.session, ctx.organization_id):
        ctx.session.delete(row)
    return {"providerIds": list(dict.fromkeys(params.provider_ids))}


SPEC = ActivitySpec(
    path="delete_oauth_providers",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS",
            Params,
            "deleteOauthProvidersIntent",
            "deleteOauthProvidersResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="CREDENTIAL",
    action="DELETE",
)
