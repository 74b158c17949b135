"""Replaying failed webhook deliveries, by id or by time range.

A replay puts ``FAILED`` deliveries back to ``PENDING``, due now, with a fresh retry schedule
(``schedule_attempts`` reset; the attempt count and attempt log are kept). The notifier's relay
picks them up like any new row. Succeeded deliveries are never replayed, so a replay cannot
send an event twice to an endpoint that accepted it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from infra.clock import as_utc, now
from infra.db.models.webhooks import WebhookDelivery
from infra.errors import InvalidRequest
from infra.webhooks.schedule import DeliveryState

MAX_REPLAY = 10_000


def _utc(value: datetime | None) -> datetime | None:
    """``value`` in UTC (naive means UTC): times are stored in UTC and SQLite compares them
    as text, so a bound with another offset would select the wrong rows."""
    return None if value is None else as_utc(value).astimezone(UTC)


def replay_failed(
    session: Session,
    *,
    delivery_ids: Sequence[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    organization_id: str | None = None,
    endpoint_id: str | None = None,
) -> list[str]:
    """Reset matching failed deliveries to pending; return their ids.

    Args:
        session: The caller's transaction (commit to make the replay happen).
        delivery_ids: Replay exactly these (only those that failed).
        since / until: Replay deliveries created in ``[since, until)``.
        organization_id / endpoint_id: Narrow a time-range replay.

    Raises:
        InvalidRequest: Neither ids nor a time range were given.
    """
    if not delivery_ids and since is None and until is None:
        raise InvalidRequest("give delivery ids or a time range to replay")
    since, until = _utc(since), _utc(until)
    query = select(WebhookDelivery.id).where(WebhookDelivery.status == DeliveryState.FAILED.value)
    if delivery_ids:
        query = query.where(WebhookDelivery.id.in_(list(delivery_ids)))
    if since is not None:
        query = query.where(WebhookDelivery.created_at >= since)
    if until is not None:
        query = query.where(WebhookDelivery.created_at < until)
    if organization_id is not None:
        query = query.where(WebhookDelivery.organization_id == organization_id)
    if endpoint_id is not None:
        query = query.where(WebhookDelivery.endpoint_id == endpoint_id)
    ids = list(session.scalars(query.limit(MAX_REPLAY)))
    if ids:
        session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id.in_(ids),
                WebhookDelivery.status == DeliveryState.FAILED.value,
            )
            .values(
                status=DeliveryState.PENDING.value,
                schedule_attempts=0,
                next_attempt_at=now(),
                dispatched_until=None,
                sending_until=None,
                sending_token=None,
                version=WebhookDelivery.version + 1,
            )
            .execution_options(synchronize_session=False)
        )
    return ids
