"""``update_webhook_endpoint``: change an endpoint's URL, name or whether it is active.

Turning an endpoint back on (``isActive: true``) also clears a disablement for failing, so
it starts afresh; failed deliveries can then be replayed.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.db.models.webhooks import SOURCE_API, WebhookEndpoint
from infra.errors import NotFound
from infra.messaging import queues
from infra.webhooks import endpoints
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateWebhookEndpointIntent``."""

    endpoint_id: str = Field(min_length=1)
    url: str | None = Field(default=None, max_length=2048)
    name: str | None = Field(default=None, max_length=endpoints.MAX_NAME_LENGTH)
    is_active: bool | None = None


def find_endpoint(ctx: ActivityContext, endpoint_id: str) -> WebhookEndpoint:
    """The organization's API endpoint ``endpoint_id``, or a 404."""
    endpoint = ctx.session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or endpoint.organization_id != ctx.organization_id or endpoint.source != SOURCE_API:
        raise NotFound(f"webhook endpoint not found: {endpoint_id}")
    return endpoint


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    endpoint = find_endpoint(ctx, params.endpoint_id)
    if params.url is not None:
        allow = endpoints.allow_list(ctx.services.settings.webhook_allow)
        endpoint.url = endpoints.check_url(params.url, allow)
    if params.name is not None:
        endpoint.name = endpoints.check_name(params.name)
    if params.is_active is not None:
        endpoint.is_active = params.is_active
        if params.is_active:
            endpoint.disabled_at = None
            endpoint.disabled_reason = None
            endpoint.failing_since = None
    endpoint.version += 1
    ctx.session.flush()
    return {"endpointId": endpoint.id, "webhookEndpoint": endpoints.render_endpoint(endpoint)}


SPEC = ActivitySpec(
    path="update_webhook_endpoint",
    versions=(
        Version(
            "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT",
            Params,
            "updateWebhookEndpointIntent",
            "updateWebhookEndpointResult",
        ),
    ),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="WEBHOOK_ENDPOINT",
    action="UPDATE",
)
