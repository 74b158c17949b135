"""``create_oauth_providers``: bind OIDC identities (issuer, audience, subject) to a user."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.directory import add_oauth_provider, provider_identity
from infra.messaging import queues
from infra.sessions.oidc_login import spend_signup
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateOauthProvidersIntentV2`` (V1 carries ``oidcToken`` only)."""

    user_id: str
    oauth_providers: list[dict[str, Any]] = Field(min_length=1)


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    for i, provider in enumerate(params.oauth_providers):
        provider_identity(provider, f"parameters.oauthProviders[{i}]")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    ids = [
        add_oauth_provider(
            ctx.session, ctx.organization_id, params.user_id, p, ctx.now, f"parameters.oauthProviders[{i}]",
            on_oidc_token=spend_signup,
        ).id
        for i, p in enumerate(params.oauth_providers)
    ]
    return {"providerIds": ids}


SPEC = ActivitySpec(
    path="create_oauth_providers",
    versions=(
        Version(
            "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
            Params,
            "createOauthProvidersIntentV2",
            "createOauthProvidersResultV2",
        ),
        Version(
            "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS",
            Params,
            "createOauthProvidersIntent",
            "createOauthProvidersResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="CREDENTIAL",
    action="CREATE",
)
