"""The ``deliver_webhook(delivery_id)`` actor: one attempt of one outbox row.

The row, not the message, is the truth. An attempt:

1. leases the row with one conditional UPDATE (``sending_until``/``sending_token``): only a
   due, unleased ``PENDING`` row can be leased, so a redelivered or duplicated message never
   sends a delivery that already succeeded or failed, and two copies cannot send at once;
2. reads the endpoint's URL and health, and commits the lease;
3. signs afresh (new timestamp, same event id) and POSTs once (``notifier.delivery``) outside
   any transaction;
4. records the attempt, moves the row by the retry schedule and, when a retry is due later,
   sends itself again with a broker delay after commit; updates the endpoint's health and
   disables an endpoint that has failed for days.

If the process dies during step 3 the lease expires and the relay (``notifier.sweeper``)
dispatches the row again: the receiver may then see the event twice, with the same event id
(at-least-once, as every webhook system documents).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import dramatiq
from sqlalchemy import or_, text, update

from infra.clock import as_utc, new_id, now, now_ms
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from infra.db.unit_of_work import UnitOfWork
from infra.messaging import actor_messages, queues
from infra.pipeline.execute import MAX_RETRIES, retry_when
from infra.services import Services
from infra.webhooks import endpoints as endpoint_rules
from infra.webhooks.destinations import AllowList, Resolver, system_resolver
from infra.webhooks.keystore import KeyRingFile, keyring_path
from infra.webhooks.schedule import (
    DEFAULT_DISABLE_AFTER_MS,
    AttemptClass,
    DeliveryState,
    DeliveryUpdate,
    RetrySchedule,
    classify,
    decide,
    failing_too_long,
)
from infra.webhooks.signing import sign_delivery
from infra.worker_services import WorkerServices
from notifier.delivery import AttemptRecord, DeliveryConfig, attempt_delivery
from notifier.dispatch import (
    MAX_IN_FLIGHT_PER_ENDPOINT,
    dispatch_due,
    endpoint_has_room,
    in_flight_cap,
    sender,
)

log = logging.getLogger(__name__)

#: A message may arrive this much before the row's due time and still be acted on.
EARLY_SLACK = timedelta(seconds=1)
#: Lease time beyond the attempt's deadline: signing before it, resolving the name, recording.
LEASE_MARGIN = timedelta(seconds=10)
#: Namespace of the PostgreSQL advisory locks that serialize claims per endpoint.
_CLAIM_LOCK_SPACE = 0x57484B31


@dataclass
class Notifier:
    """What the deliver actor runs with (built once per process by :func:`declare`)."""

    services: Services
    keys: KeyRingFile
    allow: AllowList
    schedule: RetrySchedule = field(default_factory=RetrySchedule)
    config: DeliveryConfig = field(default_factory=DeliveryConfig)
    resolver: Resolver = system_resolver
    disable_after_ms: int = DEFAULT_DISABLE_AFTER_MS
    max_in_flight: int = MAX_IN_FLIGHT_PER_ENDPOINT

    @property
    def lease(self) -> timedelta:
        """The sending lease: the attempt's deadline plus :data:`LEASE_MARGIN`.

        ``attempt_delivery`` sends no byte after its deadline and stops reading at it, so a
        lease this long outlives every send of the attempt that holds it.
        """
        return timedelta(seconds=self.config.total_timeout_s) + LEASE_MARGIN

    @property
    def dispatch_grace(self) -> timedelta:
        """How long a queued message is trusted before the relay dispatches the row again."""
        return timedelta(seconds=max(60, 6 * self.services.settings.sweep_interval_s))


@dataclass(frozen=True)
class _Claim:
    """What the leased row and its endpoint said when the lease was taken."""

    url: str
    body: bytes
    event_id: str
    event_type: str
    subject_organization_id: str
    endpoint_id: str
    attempts: int
    schedule_attempts: int
    failing_since: datetime | None
    token: str


def _why_not(notifier: Notifier, uow: Any, delivery_id: str, at: datetime) -> str:
    """Why a delivery could not be leased (the rare path: read it to explain).

    A message that arrives before the row is due (clock skew between hosts, a stray copy)
    is put back with the remaining delay rather than left to the relay's grace period. A due,
    unleased row was refused because its endpoint is at its in-flight cap: its dispatch mark
    is dropped and the relay (or the attempt that frees a slot) hands it on when there is room.
    """
    session = uow.session
    delivery = session.get(WebhookDelivery, delivery_id)
    if delivery is None:
        return "missing"
    if delivery.status != DeliveryState.PENDING.value:
        return "settled"
    remaining = as_utc(delivery.next_attempt_at) - at
    if remaining > EARLY_SLACK:
        delay_ms = int(remaining.total_seconds() * 1000)
        actor_messages.send_deliver_webhook(notifier.services.broker, delivery_id, delay_ms)
        return "not due"
    if delivery.sending_until is not None and as_utc(delivery.sending_until) >= at:
        return "busy"
    # Due and unleased, yet not claimed: its endpoint has its cap of deliveries in flight.
    # Drop the dispatch mark and leave it to the relay and to the attempt that frees a slot,
    # which hand it on once the endpoint has room (it keeps its place in the line).
    session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == delivery_id,
            WebhookDelivery.status == DeliveryState.PENDING.value,
            or_(WebhookDelivery.sending_until.is_(None), WebhookDelivery.sending_until < at),
        )
        .values(dispatched_until=None)
        .execution_options(synchronize_session=False)
    )
    uow.commit()
    return "endpoint busy"


def _claim(notifier: Notifier, delivery_id: str) -> _Claim | str:
    """Lease a due, unleased PENDING delivery whose endpoint has room, in one UPDATE; return
    why not otherwise.

    The room check (:func:`endpoint_has_room`) runs inside the UPDATE, which SQLite serializes;
    on PostgreSQL claims of one endpoint first take a transaction-scoped advisory lock, so
    concurrent claims cannot all see the same free room (an advisory lock, not a row lock,
    so it never waits on the row locks of an attempt being recorded).
    """
    at = now()
    token = new_id()
    with notifier.services.uow() as uow:
        session = uow.session
        if session.get_bind().dialect.name == "postgresql":
            session.execute(
                text(
                    "SELECT pg_advisory_xact_lock(CAST(:space AS integer), hashtext(endpoint_id)) "
                    "FROM webhook_deliveries WHERE id = :id"
                ),
                {"space": _CLAIM_LOCK_SPACE, "id": delivery_id},
            )
        row = session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery_id,
                WebhookDelivery.status == DeliveryState.PENDING.value,
                WebhookDelivery.next_attempt_at <= at + EARLY_SLACK,
                or_(WebhookDelivery.sending_until.is_(None), WebhookDelivery.sending_until < at),
                endpoint_has_room(at, notifier.max_in_flight),
            )
            .values(
                sending_until=at + notifier.lease,
                sending_token=token,
                dispatched_until=None,
                version=WebhookDelivery.version + 1,
            )
            .returning(
                WebhookDelivery.endpoint_id,
                WebhookDelivery.body,
                WebhookDelivery.event_id,
                WebhookDelivery.event_type,
                WebhookDelivery.subject_organization_id,
                WebhookDelivery.attempts,
                WebhookDelivery.schedule_attempts,
            )
            .execution_options(synchronize_session=False)
        ).first()
        if row is None:
            return _why_not(notifier, uow, delivery_id, at)
        endpoint = session.get(WebhookEndpoint, row.endpoint_id)
        if endpoint is None or not endpoint.is_active:
            session.execute(
                update(WebhookDelivery)
                .where(WebhookDelivery.id == delivery_id, WebhookDelivery.sending_token == token)
                .values(
                    status=DeliveryState.FAILED.value,
                    last_error="endpoint is not active",
                    sending_until=None,
                    sending_token=None,
                )
                .execution_options(synchronize_session=False)
            )
            uow.commit()
            return "endpoint inactive"
        claim = _Claim(
            url=endpoint.url,
            body=row.body.encode("utf-8"),
            event_id=row.event_id,
            event_type=row.event_type,
            subject_organization_id=row.subject_organization_id,
            endpoint_id=row.endpoint_id,
            attempts=row.attempts,
            schedule_attempts=row.schedule_attempts,
            failing_since=endpoint.failing_since,
            token=token,
        )
        uow.commit()
        return claim


def _send(notifier: Notifier, claim: _Claim) -> AttemptRecord:
    timestamp_ms = now_ms()
    key = notifier.keys.ring().signing_key(timestamp_ms)
    headers = sign_delivery(
        key,
        body=claim.body,
        event_id=claim.event_id,
        event_type=claim.event_type,
        organization_id=claim.subject_organization_id,
        timestamp_ms=timestamp_ms,
    )
    return attempt_delivery(
        claim.url,
        claim.body,
        headers,
        allow=notifier.allow,
        config=notifier.config,
        resolver=notifier.resolver,
    )


def _update_health(
    notifier: Notifier,
    uow: UnitOfWork,
    claim: _Claim,
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

    Writes only when the health changes (first failure, first success after failures), so the
    common path costs no extra statement.
    """
    session = uow.session
    ok = not record.refused and classify(record.status_code) is AttemptClass.SUCCESS
    if ok and claim.failing_since is None:
        return
    endpoint_id = claim.endpoint_id
    if ok or claim.failing_since is None:
        condition = (
            WebhookEndpoint.failing_since.is_not(None) if ok else WebhookEndpoint.failing_since.is_(None)
        )
        session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id == endpoint_id, condition)
            .values(failing_since=None if ok else at)
            .execution_options(synchronize_session=False)
        )
        return
    since_ms = int(as_utc(claim.failing_since).timestamp() * 1000)
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


def _row_changes(notifier: Notifier, decision: DeliveryUpdate,
                 at: datetime) -> tuple[dict[str, Any], int | None]:
    """The delivery row's new values after an attempt, and the retry delay (ms) if any."""
    values: dict[str, Any] = {
        "attempts": WebhookDelivery.attempts + 1,
        "schedule_attempts": WebhookDelivery.schedule_attempts + 1,
        "status": decision.state.value,
        "sending_until": None,
        "sending_token": None,
        "version": WebhookDelivery.version + 1,
    }
    if decision.state is DeliveryState.SUCCEEDED:
        values["delivered_at"] = at
    if decision.next_attempt_at_ms is None:
        return values, None
    due = datetime.fromtimestamp(decision.next_attempt_at_ms / 1000, tz=at.tzinfo)
    values["next_attempt_at"] = due
    values["dispatched_until"] = due + notifier.dispatch_grace
    return values, max(0, decision.next_attempt_at_ms - int(at.timestamp() * 1000))


def _attempt_row(
    delivery_id: str, claim: _Claim, record: AttemptRecord, outcome: str, at: datetime
) -> WebhookAttempt:
    return WebhookAttempt(
        delivery_id=delivery_id,
        number=claim.attempts + 1,
        started_at=datetime.fromtimestamp(record.started_at_ms / 1000, tz=at.tzinfo),
        latency_ms=record.latency_ms,
        status_code=record.status_code,
        response_excerpt=record.response_excerpt,
        error=record.error,
        address=record.address,
        outcome=outcome,
    )


def _record(notifier: Notifier, delivery_id: str, claim: _Claim, record: AttemptRecord) -> str:
    """Store the attempt and move the row, if this attempt still holds the lease."""
    at = now()
    decision = decide(
        notifier.schedule,
        attempts_made=claim.schedule_attempts + 1,
        status_code=record.status_code,
        now_ms=int(at.timestamp() * 1000),
        jitter_key=delivery_id,
        retry_after_s=record.retry_after_s,
        unsafe=record.refused,
    )
    values, delay_ms = _row_changes(notifier, decision, at)
    values.update(last_status_code=record.status_code, last_error=record.error or None)
    with notifier.services.uow() as uow:
        session = uow.session
        moved = session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id == delivery_id,
                WebhookDelivery.sending_token == claim.token,
                WebhookDelivery.status == DeliveryState.PENDING.value,
            )
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            # The lease expired and another attempt owns the row (or it was deleted): keep
            # this attempt in the log if the row exists, leave the state to its new owner.
            if session.get(WebhookDelivery, delivery_id) is None:
                return "missing"
            session.add(_attempt_row(delivery_id, claim, record, "SUPERSEDED", at))
            uow.commit()
            return "lease lost"
        session.add(_attempt_row(delivery_id, claim, record, decision.state.value, at))
        if delay_ms is not None:
            broker = notifier.services.broker
            uow.after_commit(lambda: actor_messages.send_deliver_webhook(broker, delivery_id, delay_ms))
        exhausted = (
            decision.state is DeliveryState.FAILED
            and not record.refused
            and classify(record.status_code) is AttemptClass.RETRYABLE
        )
        _update_health(notifier, uow, claim, record, at, exhausted=exhausted)
        # This attempt frees a slot of its endpoint: hand its next due row on now rather
        # than at the relay's next poll.
        following = dispatch_due(
            session,
            at=at,
            grace=notifier.dispatch_grace,
            per_endpoint=notifier.max_in_flight,
            limit=notifier.max_in_flight,
            endpoint_id=claim.endpoint_id,
        )
        if following:
            uow.after_commit(sender(notifier.services.broker, following))
        uow.commit()
        return decision.state.value


def deliver_webhook(notifier: Notifier, delivery_id: str) -> str:
    """Attempt delivery ``delivery_id`` once; returns what happened (for logs and tests)."""
    claim = _claim(notifier, delivery_id)
    if isinstance(claim, str):
        return claim
    started_ms = now_ms()
    clock = time.perf_counter()
    try:
        record = _send(notifier, claim)
    except BaseException as exc:
        # Anything that ends the attempt early (dramatiq's TimeLimitExceeded or Shutdown, a
        # bug) is still an attempt: log it and move the schedule on, then let it propagate.
        interrupted = AttemptRecord(
            started_ms,
            (time.perf_counter() - clock) * 1000.0,
            None,
            error=f"attempt interrupted: {type(exc).__name__}: {exc}"[:500],
        )
        try:
            _record(notifier, delivery_id, claim, interrupted)
        except Exception:
            log.exception("could not record the interrupted attempt of delivery %s", delivery_id)
        raise
    return _record(notifier, delivery_id, claim, record)


def build_notifier(services: Services, **overrides: Any) -> Notifier:
    """The notifier of this process (its key ring is the worker services' one)."""
    if isinstance(services, WorkerServices):
        keys = services.webhook_keys
    else:
        keys = KeyRingFile(keyring_path(services.settings.data_dir), now_ms=now_ms())
    allow = endpoint_rules.allow_list(services.settings.webhook_allow)
    overrides.setdefault(
        "max_in_flight", in_flight_cap(services.settings.threads_for(queues.NOTIFICATIONS))
    )
    return Notifier(services=services, keys=keys, allow=allow, **overrides)


def declare(services: Services, notifier: Notifier | None = None) -> list[dramatiq.Actor[[str], None]]:
    """Declare ``deliver_webhook`` on ``services.broker`` (tests may pass their notifier)."""
    notifier = notifier or build_notifier(services)

    def _deliver(delivery_id: str) -> None:
        outcome = deliver_webhook(notifier, delivery_id)
        log.debug("webhook delivery %s: %s", delivery_id, outcome)

    decorate = dramatiq.actor(
        broker=services.broker,
        actor_name=actor_messages.DELIVER_WEBHOOK,
        queue_name=actor_messages.ACTORS[actor_messages.DELIVER_WEBHOOK],
        # Only infrastructure failures (database down) reach the broker; HTTP outcomes are
        # recorded on the row and rescheduled by the retry schedule, never raised.
        max_retries=MAX_RETRIES,
        min_backoff=500,
        max_backoff=60_000,
        time_limit=int(notifier.lease.total_seconds() * 1000) + 30_000,
        retry_when=retry_when,
    )
    actor: dramatiq.Actor[[str], None] = decorate(_deliver)
    return [actor]
