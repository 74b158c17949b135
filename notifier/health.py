"""An endpoint's health: how long it has failed, and its disabling after days of failure.

Written after an attempt's record commits, in a transaction of its own, and only when it
changes state; a failure right after a success seen by this process is not written (a
flapping endpoint costs one write a minute, not one per attempt). The first success of a
failing endpoint makes its waiting deliveries due at once, so a backlog drains at the
receiver's pace as soon as it answers again.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update

from infra.clock import as_utc, now, now_ms
from infra.db.models.webhooks import WebhookDelivery, WebhookEndpoint
from infra.db.unit_of_work import UnitOfWork
from infra.webhooks import endpoints as endpoint_rules
from infra.webhooks.schedule import (
    AttemptClass,
    DeliveryState,
    classify,
    failing_too_long,
)
from notifier.delivery import AttemptRecord
from notifier.leasing import Claim
from notifier.process import Notifier
from notifier.recording import retrying

log = logging.getLogger(__name__)

#: A failure within this long after a success seen by this process does not mark the endpoint
#: failing (``failing_since`` is then at most this late, against days before a disable).
HEALTH_QUIET_S = 60.0


def succeeded(record: AttemptRecord) -> bool:
    return not record.refused and classify(record.status_code) is AttemptClass.SUCCESS


def health_change(notifier: Notifier, claim: Claim, record: AttemptRecord, exhausted: bool) -> bool:
    """Whether this outcome may change the endpoint's stored health (then
    :func:`update_health` runs): the common cases decide without a statement."""
    health = notifier.health.get(claim.endpoint_id)
    failing = health.failing_since if health.known else claim.failing_since
    if succeeded(record):
        health.last_success = time.monotonic()
        return failing is not None
    if failing is None:
        return time.monotonic() - health.last_success > HEALTH_QUIET_S
    at_ms = now_ms()
    since_ms = int(as_utc(failing).timestamp() * 1000)
    if exhausted and at_ms - since_ms >= notifier.schedule.min_span_s * 1000:
        return True
    return failing_too_long(since_ms, at_ms, disable_after_ms=notifier.disable_after_ms)


def update_health(
    notifier: Notifier,
    uow: UnitOfWork,
    claim: Claim,
    record: AttemptRecord,
    at: datetime,
    *,
    exhausted: bool = False,
) -> None:
    """Track how long the endpoint has failed; disable it after days without success.

    It is disabled after ``disable_after_ms`` (5 days) of failure, checked at each attempt,
    or at once when a delivery ran out of retries (``exhausted``) and the endpoint has failed
    without a success for at least the schedule's minimum span (a day): otherwise an endpoint
    that gets no new events after its last delivery gave up would stay enabled forever.

    Writes only when the health changes (first failure, first success after failures), each
    a conditional UPDATE of the endpoint's row alone. The first success after failures also
    makes the endpoint's deliveries that wait for a retry due now (those another transaction
    holds are skipped: they keep their time).
    """
    session = uow.session
    ok = succeeded(record)
    memory = notifier.health.get(claim.endpoint_id)
    failing_since = memory.failing_since if memory.known else claim.failing_since
    endpoint_id = claim.endpoint_id
    if ok or failing_since is None:
        condition = (
            WebhookEndpoint.failing_since.is_not(None) if ok else WebhookEndpoint.failing_since.is_(None)
        )
        session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id == endpoint_id, condition)
            .values(failing_since=None if ok else at)
            .execution_options(synchronize_session=False)
        )
        memory.failing_since, memory.known = (None if ok else at), True
        if ok:
            bring_forward(session, endpoint_id, at)
        return
    since_ms = int(as_utc(failing_since).timestamp() * 1000)
    at_ms = int(at.timestamp() * 1000)
    gave_up = exhausted and at_ms - since_ms >= notifier.schedule.min_span_s * 1000
    if not gave_up and not failing_too_long(since_ms, at_ms, disable_after_ms=notifier.disable_after_ms):
        return
    # Two deliveries to the endpoint may fail at once: the conditional UPDATE lets exactly one
    # of them disable it (the other waits on the row lock, then matches nothing).
    claimed = session.execute(
        update(WebhookEndpoint)
        .where(
            WebhookEndpoint.id == endpoint_id,
            WebhookEndpoint.is_active.is_(True),
            WebhookEndpoint.failing_since.is_not(None),
        )
        .values(is_active=False)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        return
    endpoint = session.get(WebhookEndpoint, endpoint_id, populate_existing=True)
    if endpoint is None:
        return
    days = (at_ms - since_ms) / 86_400_000
    reason = f"disabled after failing for {days:.1f} days without success"
    if gave_up:
        reason += "; a delivery ran out of retries"
    endpoint_rules.disable_endpoint(uow, endpoint, reason, at)
    log.warning("webhook endpoint %s disabled after %.1f days of failure", endpoint_id, days)


def bring_forward(session: Any, endpoint_id: str, at: datetime) -> None:
    """Make an endpoint's deliveries waiting for a retry due at ``at`` (it answers again)."""
    waiting = (
        select(WebhookDelivery.id)
        .where(
            WebhookDelivery.endpoint_id == endpoint_id,
            WebhookDelivery.status == DeliveryState.PENDING.value,
            WebhookDelivery.next_attempt_at > at,
            or_(WebhookDelivery.sending_until.is_(None), WebhookDelivery.sending_until < at),
        )
        .with_for_update(skip_locked=True)
    )
    session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id.in_(waiting.scalar_subquery()))
        .values(next_attempt_at=at, dispatched_until=None)
        .execution_options(synchronize_session=False)
    )


def record_health(notifier: Notifier, claim: Claim, record: AttemptRecord, exhausted: bool) -> None:
    """The endpoint's health after an attempt, in a transaction of its own (rarely needed)."""
    if not health_change(notifier, claim, record, exhausted):
        return

    def work() -> None:
        with notifier.services.uow() as uow:
            update_health(notifier, uow, claim, record, now(), exhausted=exhausted)
            uow.commit()

    try:
        retrying("recording an endpoint's health", work)
    except Exception:
        log.exception("could not record the health of webhook endpoint %s", claim.endpoint_id)
