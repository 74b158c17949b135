"""Handing due delivery rows to the broker, per endpoint only as many as it has room for.

Used by the relay (``notifier.sweeper``), which polls for due rows, and by the deliver actor
after each attempt, which hands the next due row of the same endpoint on at once, so a backlog
to one endpoint flows at the endpoint's pace rather than the relay's poll interval.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import dramatiq
from sqlalchemy import Subquery, and_, func, or_, select, update
from sqlalchemy.orm import Session

from infra.db.models.webhooks import WebhookDelivery
from infra.messaging import contracts
from infra.webhooks.schedule import DeliveryState


def _occupied(at: datetime) -> Subquery:
    """Per endpoint, the slots taken at ``at``: deliveries being sent and due ones already
    handed to the broker (their message will claim a slot or give the row back)."""
    return (
        select(WebhookDelivery.endpoint_id.label("endpoint_id"), func.count().label("taken"))
        .where(
            WebhookDelivery.status == DeliveryState.PENDING.value,
            or_(
                WebhookDelivery.sending_until >= at,
                and_(WebhookDelivery.dispatched_until >= at, WebhookDelivery.next_attempt_at <= at),
            ),
        )
        .group_by(WebhookDelivery.endpoint_id)
        .subquery()
    )


def dispatch_due(
    session: Session,
    *,
    at: datetime,
    grace: timedelta,
    per_endpoint: int,
    limit: int,
    endpoint_id: str | None = None,
) -> list[str]:
    """Mark up to ``limit`` due, undispatched, unleased rows dispatched until ``at + grace``
    (of ``endpoint_id`` only, if given) and return their ids, to be sent after the commit.

    Per endpoint, a row is taken only if its rank among the endpoint's due rows plus the
    slots already taken stays within ``per_endpoint``: the rest wait for room instead of
    bouncing off the cap in the actor.
    """
    conditions = [
        WebhookDelivery.status == DeliveryState.PENDING.value,
        WebhookDelivery.next_attempt_at <= at,
        or_(WebhookDelivery.dispatched_until.is_(None), WebhookDelivery.dispatched_until < at),
        or_(WebhookDelivery.sending_until.is_(None), WebhookDelivery.sending_until < at),
    ]
    if endpoint_id is not None:
        conditions.append(WebhookDelivery.endpoint_id == endpoint_id)
    taken = _occupied(at)
    due = (
        select(
            WebhookDelivery.id.label("id"),
            WebhookDelivery.next_attempt_at.label("due"),
            (
                func.row_number().over(
                    partition_by=WebhookDelivery.endpoint_id,
                    order_by=(WebhookDelivery.next_attempt_at, WebhookDelivery.id),
                )
                + func.coalesce(taken.c.taken, 0)
            ).label("slot"),
        )
        .select_from(WebhookDelivery)
        .outerjoin(taken, taken.c.endpoint_id == WebhookDelivery.endpoint_id)
        .where(*conditions)
        .subquery()
    )
    ids = list(
        session.scalars(select(due.c.id).where(due.c.slot <= per_endpoint).order_by(due.c.due).limit(limit))
    )
    if ids:
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(ids))
            .values(dispatched_until=at + grace)
            .execution_options(synchronize_session=False)
        )
    return ids


def sender(broker: dramatiq.Broker, ids: list[str]) -> Callable[[], None]:
    """A callback that sends ``deliver_webhook`` for each of ``ids`` (run it after commit)."""

    def send() -> None:
        for delivery_id in ids:
            contracts.send_deliver_webhook(broker, delivery_id)

    return send
