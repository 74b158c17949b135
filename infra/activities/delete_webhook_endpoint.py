"""``delete_webhook_endpoint``: remove an endpoint and whatever it was still owed."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.activities.update_webhook_endpoint import find_endpoint
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteWebhookEndpointIntent``."""

    endpoint_id: str = Field(min_length=1)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    endpoint = find_endpoint(ctx, params.endpoint_id)
    ctx.session.delete(endpoint)
    ctx.session.flush()
    return {"endpointId": params.endpoint_id}


SPEC = ActivitySpec(
    path="delete_webhook_endpoint",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT",
            Params,
            "deleteWebhookEndpointIntent",
            "deleteWebhookEndpointResult",
        ),
    ),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="WEBHOOK_ENDPOINT",
    action="DELETE",
)
