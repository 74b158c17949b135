"""``delete_oauth_providers``: unbind OIDC identities from a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import OauthProvider
from infra.errors import NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteOauthProvidersIntent``."""

    user_id: str
    provider_ids: list[str] = Field(min_length=1)


def _find(params: Params, session: Any, organization_id: str) -> list[OauthProvider]:
    user_in_org(session, organization_id, params.user_id)
    rows = session.scalars(
        select(OauthProvider).where(
            OauthProvider.id.in_(params.provider_ids), OauthProvider.user_id == params.user_id
        )
    ).all()
    missing = set(params.provider_ids) - {r.id for r in rows}
    if missing:
        raise NotFound(f"OAuth providers not found for user {params.user_id}: {', '.join(sorted(missing))}")
    return list(rows)


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
