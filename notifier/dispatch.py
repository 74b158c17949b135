"""Handing due delivery rows to the broker, per endpoint only as many as it has room for.

Used by the relay (``notifier.sweeper``), which polls for due rows. A run of the deliver actor
(``notifier.actors``) leases its endpoint's next due row itself after each attempt, so a
backlog to one endpoint flows at the endpoint's pace rather than the relay's poll interval.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import dramatiq
from sqlalchemy import ColumnElement, Subquery, and_, case, distinct, func, or_, select, update
from sqlalchemy.orm import Session, aliased

from infra.db.models.webhooks import WebhookDelivery
from infra.messaging import actor_messages
from infra.webhooks.schedule import DeliveryState

#: The least number of deliveries one endpoint may have in flight (see :func:`in_flight_cap`).
MAX_IN_FLIGHT_PER_ENDPOINT = 2


def in_flight_cap(threads: int) -> int:
    """Deliveries one endpoint may have in flight at once, for a notifier pool of ``threads``.

    Half the pool (at least :data:`MAX_IN_FLIGHT_PER_ENDPOINT`): a healthy endpoint gets
    deliveries in parallel, and a hanging one holds at most half the threads, so the other
    half keeps serving every other endpoint.
    """
    return max(MAX_IN_FLIGHT_PER_ENDPOINT, threads // 2)


def _being_sent(row: Any, at: datetime) -> ColumnElement[bool]:
    """SQL condition on ``row`` (``WebhookDelivery`` or an alias): it holds an unexpired
    sending lease at ``at``, so it takes a slot of its endpoint."""
    return and_(row.status == DeliveryState.PENDING.value, row.sending_until >= at)


def endpoint_has_room(at: datetime, cap: int) -> ColumnElement[bool]:
    """SQL condition on a ``webhook_deliveries`` row (a claim): fewer than ``cap`` runs are
    sending to its endpoint at ``at`` (a run's leased rows share its token)."""
    other = aliased(WebhookDelivery)
    sending = (
        select(func.count(distinct(other.sending_token)))
        .select_from(other)
        .where(other.endpoint_id == WebhookDelivery.endpoint_id, _being_sent(other, at))
        .scalar_subquery()
    )
    return sending < cap


def _occupied(at: datetime, endpoint_id: str | None) -> Subquery:
    """Per endpoint (``endpoint_id`` only, if given), the slots taken at ``at``: runs sending
    (the rows a run leased share its token) and due rows already handed to the broker (their
    message will start a run or give the row back)."""
    handed_on = and_(
        WebhookDelivery.status == DeliveryState.PENDING.value,
        WebhookDelivery.dispatched_until >= at,
        WebhookDelivery.next_attempt_at <= at,
    )
    sending = _being_sent(WebhookDelivery, at)
    taken = func.count(distinct(case((sending, WebhookDelivery.sending_token)))) + func.count(
        case((handed_on, 1))
    )
    query = select(WebhookDelivery.endpoint_id.label("endpoint_id"), taken.label("taken"))
    if endpoint_id is not None:
        query = query.where(WebhookDelivery.endpoint_id == endpoint_id)
    return query.where(or_(sending, handed_on)).group_by(WebhookDelivery.endpoint_id).subquery()


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
    taken = _occupied(at, endpoint_id)
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
    if not ids:
        return []
    # Rows another transaction holds (an attempt being recorded, a run leasing its next row)
    # are skipped rather than waited for: this UPDATE never waits on a row lock, so it cannot
    # take part in a deadlock whatever order the others lock in.
    free = (
        select(WebhookDelivery.id)
        .where(WebhookDelivery.id.in_(ids), *conditions)
        .with_for_update(skip_locked=True)
    )
    marked = session.scalars(
        update(WebhookDelivery)
        .where(WebhookDelivery.id.in_(free.scalar_subquery()))
        .values(dispatched_until=at + grace)
        .returning(WebhookDelivery.id)
        .execution_options(synchronize_session=False)
    )
    return list(marked)


def sender(broker: dramatiq.Broker, ids: list[str]) -> Callable[[], None]:
    """A callback that sends ``deliver_webhook`` for each of ``ids`` (run it after commit)."""

    def send() -> None:
        for delivery_id in ids:
            actor_messages.send_deliver_webhook(broker, delivery_id)

    return send
