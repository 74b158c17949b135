"""``list_webhook_deliveries``: an endpoint's recent deliveries (walletd; not in Turnkey's API).

What the dashboard shows under each endpoint: event, status, attempts, last answer. The
newest first, at most ``limit`` (default 50, at most 200).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.clock import wire_timestamp
from infra.db.models.webhooks import WebhookDelivery, WebhookEndpoint
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    endpoint_id: str
    limit: int = Field(default=50, ge=1, le=200)


def render_delivery(row: WebhookDelivery) -> dict[str, Any]:
    """One delivery as the dashboard reads it (no body: it may be large)."""
    return {"deliveryId": row.id, "eventId": row.event_id, "eventType": row.event_type,
            "activityId": row.activity_id, "status": row.status, "attempts": row.attempts,
            "lastStatusCode": row.last_status_code, "lastError": row.last_error,
            "createdAt": wire_timestamp(row.created_at),
            "deliveredAt": wire_timestamp(row.delivered_at) if row.delivered_at else None}


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    endpoint = ctx.session.get(WebhookEndpoint, params.endpoint_id)
    if endpoint is None or endpoint.organization_id != params.organization_id:
        raise NotFound(f"webhook endpoint not found: {params.endpoint_id}")
    rows = ctx.session.scalars(
        select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id).limit(params.limit))
    return {"deliveries": [render_delivery(r) for r in rows]}


SPEC = QuerySpec(path="list_webhook_deliveries", params=Params, run=run)
