"""``list_webhook_endpoints``: the organization's webhook endpoints."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.webhooks import SOURCE_API, WebhookEndpoint
from infra.queries.spec import QueryContext, QuerySpec
from infra.webhooks.endpoints import render_endpoint
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1ListWebhookEndpointsRequest``."""

    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    rows = ctx.session.scalars(
        select(WebhookEndpoint)
        .where(
            WebhookEndpoint.organization_id == params.organization_id,
            WebhookEndpoint.source == SOURCE_API,
        )
        .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
    ).all()
    return {"webhookEndpoints": [render_endpoint(e) for e in rows]}


SPEC = QuerySpec(path="list_webhook_endpoints", params=Params, run=run)
