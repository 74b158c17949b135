"""``create_webhook_endpoint``: register a URL that receives the organization's events."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import func, select

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.clock import new_id
from infra.db.models.webhooks import SOURCE_API, WebhookEndpoint
from infra.errors import ResourceExhausted
from infra.messaging import queues
from infra.validation import caps
from infra.webhooks import endpoints
from infra.wiremodel import WireModel

MAX_ENDPOINTS_PER_ORGANIZATION = 20


class Subscription(WireModel):
    """``v1WebhookSubscriptionParams``."""

    event_type: str
    filters_json: str | None = None
    is_active: bool | None = None


class Params(WireModel):
    """``v1CreateWebhookEndpointIntent``."""

    url: str = Field(min_length=1, max_length=2048)
    name: str = Field(min_length=1, max_length=endpoints.MAX_NAME_LENGTH)
    subscriptions: list[Subscription] = Field(default_factory=list, max_length=caps.SUBSCRIPTIONS)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    allow = endpoints.allow_list(ctx.services.settings.webhook_allow)
    count = ctx.session.scalar(
        select(func.count())
        .select_from(WebhookEndpoint)
        .where(
            WebhookEndpoint.organization_id == ctx.organization_id,
            WebhookEndpoint.source == SOURCE_API,
        )
    )
    if (count or 0) >= MAX_ENDPOINTS_PER_ORGANIZATION:
        raise ResourceExhausted(
            f"an organization has at most {MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints"
        )
    endpoint = WebhookEndpoint(
        id=new_id(),
        organization_id=ctx.organization_id,
        url=endpoints.check_url(params.url, allow),
        name=endpoints.check_name(params.name),
        is_active=True,
        subscriptions=endpoints.check_subscriptions([s.wire() for s in params.subscriptions]),
        source=SOURCE_API,
        version=1,
    )
    ctx.session.add(endpoint)
    ctx.session.flush()
    return {"endpointId": endpoint.id, "webhookEndpoint": endpoints.render_endpoint(endpoint)}


SPEC = ActivitySpec(
    path="create_webhook_endpoint",
    versions=(
        Version(
            "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
            Params,
            "createWebhookEndpointIntent",
            "createWebhookEndpointResult",
        ),
    ),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="WEBHOOK_ENDPOINT",
    action="CREATE",
)
