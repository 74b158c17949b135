"""``replay_webhook_deliveries``: send failed deliveries again (walletd; not in Turnkey's API).

The dashboard's "Replay" button, as an activity so it is stamped, decided by policies and
recorded like every other change. Only the organization's own failed deliveries are reset
(``infra.webhooks.replay.replay_failed``); the notifier sends them as new.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.messaging import queues
from infra.webhooks.replay import replay_failed
from infra.wiremodel import WireModel


class Params(WireModel):
    """The failed deliveries to send again."""

    delivery_ids: list[str] = Field(min_length=1, max_length=1000)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    ids = replay_failed(ctx.session, delivery_ids=params.delivery_ids,
                        organization_id=ctx.organization_id)
    return {"deliveryIds": ids}


SPEC = ActivitySpec(
    path="replay_webhook_deliveries",
    versions=(Version("ACTIVITY_TYPE_REPLAY_WEBHOOK_DELIVERIES", Params,
                      "replayWebhookDeliveriesIntent", "replayWebhookDeliveriesResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="WEBHOOK_ENDPOINT",
    action="UPDATE",
)
