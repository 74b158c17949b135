"""The ``deliver_webhook(delivery_id)`` actor: attempts of the outbox rows of one endpoint.

The row, not the message, is the truth. A message starts a *run* on the row's endpoint:

1. a cheap read of the row says whether there is anything to do (a stray or late copy of a
   message costs one SELECT); a run needs one of this process's slots for the endpoint;
2. the row is leased with one conditional UPDATE (``sending_until``/``sending_token``): only a
   due, unleased ``PENDING`` row whose endpoint has room (:func:`endpoint_has_room`, checked
   under an advisory lock on PostgreSQL) can be leased, so a redelivered or duplicated message
   never sends a delivery that already succeeded or failed, and two copies cannot send at once;
3. the row is signed afresh (new timestamp, same event id) and POSTed once over the
   endpoint's kept-alive connections (``notifier.delivery``), outside any transaction;
4. one transaction records the attempt and moves the row by the retry schedule and, in the
   same statement order every time (this row by id, then the attempt, then at most one other
   row of the endpoint with ``SKIP LOCKED``), leases the endpoint's next due row, which the run
   sends next (step 3). Nothing in it waits for a lock held by a transaction that could wait
   for this one, so it cannot deadlock; a deadlock or serialization failure all the same, or a
   lost connection, is retried in place (the receiver's answer is never dropped for it);
5. after a time budget the run hands the endpoint's next due row to the broker instead
   (fairness between endpoints: the message queues behind the others') and ends.

The endpoint's health (``failing_since``) is written after the record commits, in a
transaction of its own, and only when it changes state; a failure right after a success seen
by this process is not written (a flapping endpoint costs one write a minute, not one per
attempt). The first success of a failing endpoint makes its waiting deliveries due at once,
so a backlog drains at the receiver's pace as soon as it answers again.

If the process dies during step 3 the lease expires and the relay (``notifier.sweeper``)
dispatches the row again: the receiver may then see the event twice, with the same event id
(at-least-once, as every webhook system documents). Nothing else sends an event twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

import dramatiq
from sqlalchemy import Table, bindparam, distinct, func, insert, or_, select, text, update
from sqlalchemy.exc import DBAPIError

from infra.clock import as_utc, new_id, now, now_ms
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from infra.db.unit_of_work import UnitOfWork
from infra.errors import Internal
from infra.messaging import actor_messages, queues
from infra.pipeline.execute import MAX_RETRIES, is_transient, retry_when
from infra.services import Services
from infra.webhooks import endpoints as endpoint_rules
from infra.webhooks.destinations import AllowList, Resolver, system_resolver
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
from notifier.delivery import AttemptRecord, DeliveryConfig, Transports, attempt_delivery
from notifier.dispatch import (
    MAX_IN_FLIGHT_PER_ENDPOINT,
    in_flight_cap,
)

log = logging.getLogger(__name__)

#: A message may arrive this much before the row's due time and still be acted on.
EARLY_SLACK = timedelta(seconds=1)
#: Lease time beyond the attempt's deadline: signing before it, resolving the name, recording.
LEASE_MARGIN = timedelta(seconds=10)
#: Namespace of the PostgreSQL advisory locks that serialize claims per endpoint.
_CLAIM_LOCK_SPACE = 0x57484B31
#: How long one run keeps sending an endpoint's due rows before handing on through the broker.
RUN_BUDGET_S = 2.0
#: Rows a run leases at once (sent one after the other, recorded together).
RUN_BATCH = 16
#: How long a run sends before recording what it sent (and renewing its other leases).
RUN_BATCH_WINDOW_S = 0.05
#: How long an endpoint's URL and state read by a run are used before being read again.
ENDPOINT_FRESH_S = 1.0
#: A failure within this long after a success seen by this process does not mark the endpoint
#: failing (``failing_since`` is then at most this late, against days before a disable).
HEALTH_QUIET_S = 60.0
#: How long recording an outcome is retried in place on deadlocks and lost connections
#: (a PostgreSQL restart) before giving up (the lease then expires; the relay sends again).
RECORD_RETRY_S = 30.0
#: SQLSTATEs of a deadlock and a serialization failure.
_RETRY_STATES = frozenset({"40P01", "40001"})

T = TypeVar("T")


class EndpointSlots:
    """Runs of this process per endpoint, at most ``cap`` at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken: dict[str, int] = {}

    def take(self, endpoint_id: str, cap: int) -> bool:
        with self._lock:
            if self._taken.get(endpoint_id, 0) >= cap:
                return False
            self._taken[endpoint_id] = self._taken.get(endpoint_id, 0) + 1
            return True

    def release(self, endpoint_id: str) -> None:
        with self._lock:
            left = self._taken.get(endpoint_id, 0) - 1
            if left > 0:
                self._taken[endpoint_id] = left
            else:
                self._taken.pop(endpoint_id, None)


@dataclass
class _Health:
    """What this process knows of one endpoint's health."""

    failing_since: datetime | None = None
    known: bool = False
    last_success: float = float("-inf")


class HealthMemory:
    """Per endpoint: whether it is marked failing, as last written or read by this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_endpoint: dict[str, _Health] = {}

    def get(self, endpoint_id: str) -> _Health:
        with self._lock:
            health = self._by_endpoint.get(endpoint_id)
            if health is None:
                health = self._by_endpoint[endpoint_id] = _Health()
            return health

    def observe(self, endpoint_id: str, failing_since: datetime | None) -> None:
        """The endpoint's row as just read."""
        health = self.get(endpoint_id)
        health.failing_since, health.known = failing_since, True


@dataclass
class Notifier:
    """What the deliver actor runs with (built once per process by :func:`declare`)."""

    services: Services
    keys: Any  # ``.ring()``: SealedKeyRing (tests may give a plaintext KeyRingFile)
    allow: AllowList
    schedule: RetrySchedule = field(default_factory=RetrySchedule)
    config: DeliveryConfig = field(default_factory=DeliveryConfig)
    resolver: Resolver = system_resolver
    disable_after_ms: int = DEFAULT_DISABLE_AFTER_MS
    max_in_flight: int = MAX_IN_FLIGHT_PER_ENDPOINT
    run_budget_s: float = RUN_BUDGET_S
    #: Rows a run leases at once, sends one after the other and records together.
    batch: int = RUN_BATCH
    #: A run records what it sent at least this often (and before sending a row leased
    #: longer ago), so a lease always outlives the attempt that holds it.
    batch_window_s: float = RUN_BATCH_WINDOW_S
    slots: EndpointSlots = field(default_factory=EndpointSlots)
    health: HealthMemory = field(default_factory=HealthMemory)
    transports: Transports | None = None

    def __post_init__(self) -> None:
        if self.transports is None:
            self.transports = Transports(self.max_in_flight)

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
class _Endpoint:
    """An endpoint as a run read it."""

    url: str
    failing_since: datetime | None
    read_at: float


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
    delivery_id: str = ""
    endpoint_read_at: float = 0.0


_DELIVERIES: Table = WebhookDelivery.__table__  # type: ignore[assignment]
_ATTEMPTS: Table = WebhookAttempt.__table__  # type: ignore[assignment]
_D = _DELIVERIES.c
_PENDING = DeliveryState.PENDING.value

_LEASED_COLUMNS = (
    _D.id,
    _D.endpoint_id,
    _D.body,
    _D.event_id,
    _D.event_type,
    _D.subject_organization_id,
    _D.attempts,
    _D.schedule_attempts,
)

# The hot path's statements, built once (building a statement costs about as much as
# running it): Core statements on the tables, parameters bound at execution.
_PEEK = select(_D.endpoint_id, _D.status, _D.next_attempt_at, _D.sending_until).where(
    _D.id == bindparam("delivery_id")
)
_LEASE_VALUES = {
    "sending_until": bindparam("lease_until"),
    "sending_token": bindparam("token"),
    "dispatched_until": None,
    "version": _D.version + 1,
}
_unleased = or_(_D.sending_until.is_(None), _D.sending_until < bindparam("at"))
_other = _DELIVERIES.alias("other")
#: Runs sending to the row's endpoint: a run's leased rows share its token.
_SENDING = (
    select(func.count(distinct(_other.c.sending_token)))
    .select_from(_other)
    .where(
        _other.c.endpoint_id == _D.endpoint_id,
        _other.c.status == _PENDING,
        _other.c.sending_until >= bindparam("at"),
    )
    .scalar_subquery()
)
#: Lease one row by id: due, unleased, PENDING, and its endpoint below its cap of runs.
_CLAIM = (
    update(_DELIVERIES)
    .where(
        _D.id == bindparam("delivery_id"),
        _D.status == _PENDING,
        _D.next_attempt_at <= bindparam("due_by"),
        _unleased,
        bindparam("cap") > _SENDING,
    )
    .values(**_LEASE_VALUES)
    .returning(*_LEASED_COLUMNS)
)
#: The endpoint's next due, unleased rows (``b_limit`` of them), skipping rows another
#: transaction holds (so leasing them never waits for a lock).
_NEXT_DUE = (
    select(_D.id)
    .where(
        _D.endpoint_id == bindparam("b_endpoint"),
        _D.status == _PENDING,
        _D.next_attempt_at <= bindparam("at"),
        _unleased,
    )
    .order_by(_D.next_attempt_at, _D.id)
    .limit(bindparam("b_limit"))
    .with_for_update(skip_locked=True)
)
_LEASE_MORE = (
    update(_DELIVERIES)
    .where(_D.id.in_(_NEXT_DUE))
    .values(**_LEASE_VALUES)
    .returning(*_LEASED_COLUMNS)
)
#: Keep (``b_until`` a time) or give back (``None``) the rows a run leased and did not send.
_RELEASE = (
    update(_DELIVERIES)
    .where(_D.id.in_(bindparam("b_ids", expanding=True)), _D.sending_token == bindparam("token"),
           _D.status == _PENDING)
    .values(sending_until=bindparam("b_until"), sending_token=bindparam("b_token"))
)
_HAND_ON = (
    update(_DELIVERIES)
    .where(_D.id.in_(_NEXT_DUE))
    .values(dispatched_until=bindparam("b_dispatched"))
    .returning(_D.id)
)
_INSERT_ATTEMPT = insert(_ATTEMPTS)
_MOVES: dict[frozenset[str], Any] = {}


def _move_statement(columns: frozenset[str]) -> Any:
    """``UPDATE`` of the leased row with these columns (one statement per column set)."""
    statement = _MOVES.get(columns)
    if statement is None:
        computed = {"attempts": _D.attempts + 1, "schedule_attempts": _D.schedule_attempts + 1,
                    "version": _D.version + 1}
        statement = _MOVES[columns] = (
            update(_DELIVERIES)
            .where(_D.id == bindparam("delivery_id"), _D.sending_token == bindparam("token"),
                   _D.status == _PENDING)
            .values({name: computed.get(name, bindparam(f"v_{name}")) for name in sorted(columns)})
        )
    return statement


def _claim_of(row: Any, endpoint: _Endpoint, token: str) -> _Claim:
    return _Claim(
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
        delivery_id=row.id,
        endpoint_read_at=endpoint.read_at,
    )


def _retrying(what: str, work: Callable[[], T], *, budget_s: float = RECORD_RETRY_S) -> T:
    """Run ``work`` (one whole transaction), again on deadlocks, serialization failures and
    lost connections, for up to ``budget_s``."""
    deadline = time.monotonic() + budget_s
    pause = 0.05
    while True:
        try:
            return work()
        except DBAPIError as exc:
            state = getattr(exc.orig, "sqlstate", None)
            if not (state in _RETRY_STATES or is_transient(exc)) or time.monotonic() > deadline:
                raise
            log.warning("%s: %s; trying again", what, (state or type(exc.orig).__name__))
            time.sleep(pause)
            pause = min(pause * 2, 2.0)


def _read_endpoint(notifier: Notifier, session: Any, endpoint_id: str) -> _Endpoint | None:
    """The endpoint's URL and health if it is active (``None`` otherwise)."""
    endpoint = session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or not endpoint.is_active:
        return None
    notifier.health.observe(endpoint_id, endpoint.failing_since)
    return _Endpoint(endpoint.url, endpoint.failing_since, time.monotonic())


def _fail_inactive(session: Any, delivery_id: str, token: str) -> None:
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


def _peek(notifier: Notifier, delivery_id: str, at: datetime) -> str | tuple[str, str]:
    """Whether a message's row is worth a claim: ``("claim", endpoint_id)`` or why not.

    A message that arrives before the row is due (a stray copy of a message for an earlier
    attempt, clock skew between hosts) is dropped: the row waits undispatched, and the relay
    hands it on once it is due.
    """
    with notifier.services.session_factory() as session:
        row = session.connection().execute(_PEEK, {"delivery_id": delivery_id}).first()
    if row is None:
        return "missing"
    if row.status != DeliveryState.PENDING.value:
        return "settled"
    remaining = as_utc(row.next_attempt_at) - at
    if remaining > EARLY_SLACK:
        return "not due"
    if row.sending_until is not None and as_utc(row.sending_until) >= at:
        return "busy"
    return ("claim", row.endpoint_id)


def _give_back(notifier: Notifier, delivery_id: str, at: datetime) -> None:
    """A due, unleased row refused for lack of room: drop its dispatch mark, so that the relay
    or a run of its endpoint hands it on once there is room (it keeps its place in the line)."""
    with notifier.services.uow() as uow:
        uow.session.execute(
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
        row = session.connection().execute(_CLAIM, {
            "delivery_id": delivery_id, "at": at, "due_by": at + EARLY_SLACK,
            "cap": notifier.max_in_flight, "lease_until": at + notifier.lease, "token": token,
        }).first()
        if row is None:
            uow.session.rollback()
            return "refused"
        endpoint = _read_endpoint(notifier, session, row.endpoint_id)
        if endpoint is None:
            _fail_inactive(session, delivery_id, token)
            uow.commit()
            return "endpoint inactive"
        uow.commit()
        return _claim_of(row, endpoint, token)


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
        transports=notifier.transports,
        endpoint_id=claim.endpoint_id,
    )


def _succeeded(record: AttemptRecord) -> bool:
    return not record.refused and classify(record.status_code) is AttemptClass.SUCCESS


def _health_change(notifier: Notifier, claim: _Claim, record: AttemptRecord, exhausted: bool) -> bool:
    """Whether this outcome may change the endpoint's stored health (then
    :func:`_update_health` runs): the common cases decide without a statement."""
    health = notifier.health.get(claim.endpoint_id)
    failing = health.failing_since if health.known else claim.failing_since
    if _succeeded(record):
        health.last_success = time.monotonic()
        return failing is not None
    if failing is None:
        return time.monotonic() - health.last_success > HEALTH_QUIET_S
    at_ms = now_ms()
    since_ms = int(as_utc(failing).timestamp() * 1000)
    if exhausted and at_ms - since_ms >= notifier.schedule.min_span_s * 1000:
        return True
    return failing_too_long(since_ms, at_ms, disable_after_ms=notifier.disable_after_ms)


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

    Writes only when the health changes (first failure, first success after failures), each
    a conditional UPDATE of the endpoint's row alone. The first success after failures also
    makes the endpoint's deliveries that wait for a retry due now (those another transaction
    holds are skipped: they keep their time).
    """
    session = uow.session
    ok = _succeeded(record)
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
            _bring_forward(session, endpoint_id, at)
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


def _bring_forward(session: Any, endpoint_id: str, at: datetime) -> None:
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


def _record_health(notifier: Notifier, claim: _Claim, record: AttemptRecord, exhausted: bool) -> None:
    """The endpoint's health after an attempt, in a transaction of its own (rarely needed)."""
    if not _health_change(notifier, claim, record, exhausted):
        return

    def work() -> None:
        with notifier.services.uow() as uow:
            _update_health(notifier, uow, claim, record, now(), exhausted=exhausted)
            uow.commit()

    try:
        _retrying("recording an endpoint's health", work)
    except Exception:
        log.exception("could not record the health of webhook endpoint %s", claim.endpoint_id)


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
    # No delayed broker message: the relay hands the row on once it is due (it looks at
    # least every second), or a run of its endpoint leases it; a message per retry would
    # mostly find the row already delivered (a recovered endpoint's backlog is brought
    # forward and drained by runs).
    values["dispatched_until"] = None
    return values, max(0, decision.next_attempt_at_ms - int(at.timestamp() * 1000))


def _attempt_values(
    delivery_id: str, claim: _Claim, record: AttemptRecord, outcome: str, at: datetime
) -> dict[str, Any]:
    return {
        "id": new_id(),
        "delivery_id": delivery_id,
        "number": claim.attempts + 1,
        "started_at": datetime.fromtimestamp(record.started_at_ms / 1000, tz=at.tzinfo),
        "latency_ms": record.latency_ms,
        "status_code": record.status_code,
        "response_excerpt": record.response_excerpt,
        "error": record.error,
        "address": record.address,
        "outcome": outcome,
    }


@dataclass
class _Run:
    """One run of an endpoint: the rows it leased (under its token) and has not sent yet,
    and the outcomes it has not recorded yet."""

    token: str
    endpoint_id: str
    endpoint: _Endpoint
    queue: list[_Claim]
    leased_at: float
    outcomes: list[tuple[_Claim, AttemptRecord]] = field(default_factory=list)


def _lease_more(notifier: Notifier, session: Any, run: _Run, at: datetime, count: int) -> list[_Claim]:
    """Lease up to ``count`` more due rows of the run's endpoint under its token."""
    if count <= 0:
        return []
    rows = session.connection().execute(_LEASE_MORE, {
        "b_endpoint": run.endpoint_id, "at": at, "b_limit": count,
        "lease_until": at + notifier.lease, "token": run.token,
    }).all()
    if not rows:
        return []
    if time.monotonic() - run.endpoint.read_at >= ENDPOINT_FRESH_S:
        endpoint = _read_endpoint(notifier, session, run.endpoint_id)
        if endpoint is None:
            for row in rows:
                _fail_inactive(session, row.id, run.token)
            return []
        run.endpoint = endpoint
    claims = [_claim_of(row, run.endpoint, run.token) for row in rows]
    claims.sort(key=lambda c: c.delivery_id)
    return claims


def _hand_on(notifier: Notifier, session: Any, run: _Run, at: datetime) -> str | None:
    """Mark the endpoint's next due row dispatched; its id, to send after the commit."""
    handed = session.connection().execute(_HAND_ON, {
        "b_endpoint": run.endpoint_id, "at": at, "b_limit": 1,
        "b_dispatched": at + notifier.dispatch_grace,
    }).scalar()
    return str(handed) if handed is not None else None


@dataclass(frozen=True)
class _Outcome:
    """An attempt's decision and the row changes it makes."""

    claim: _Claim
    record: AttemptRecord
    decision: DeliveryUpdate
    values: dict[str, Any]
    delay_ms: int | None


def _outcome(notifier: Notifier, claim: _Claim, record: AttemptRecord, at: datetime) -> _Outcome:
    decision = decide(
        notifier.schedule,
        attempts_made=claim.schedule_attempts + 1,
        status_code=record.status_code,
        now_ms=int(at.timestamp() * 1000),
        jitter_key=claim.delivery_id,
        retry_after_s=record.retry_after_s,
        unsafe=record.refused,
    )
    values, delay_ms = _row_changes(notifier, decision, at)
    values.update(last_status_code=record.status_code, last_error=record.error or None)
    return _Outcome(claim, record, decision, values, delay_ms)


def _move_params(outcome: _Outcome) -> dict[str, Any]:
    params = {f"v_{name}": value for name, value in outcome.values.items() if not hasattr(value, "compile")}
    params.update(delivery_id=outcome.claim.delivery_id, token=outcome.claim.token)
    return params


def _move_all(connection: Any, outcomes: list[_Outcome], at: datetime) -> list[tuple[_Outcome, str]]:
    """Move every row by its outcome and log its attempt; per outcome, what it recorded
    (its new state, or ``lease lost`` when the row was not this run's any more)."""
    groups: dict[frozenset[str], list[_Outcome]] = {}
    for outcome in sorted(outcomes, key=lambda o: o.claim.delivery_id):
        groups.setdefault(frozenset(outcome.values), []).append(outcome)
    done: list[tuple[_Outcome, str]] = []
    for columns, group in groups.items():
        params = [_move_params(o) for o in group]
        moved = connection.execute(_move_statement(columns), params)
        if moved.rowcount == len(group):
            done += [(o, o.decision.state.value) for o in group]
            continue
        # Some lease was lost (expired, another attempt owns the row): find which, one by one
        # (the rows already moved by the batch match nothing now, as if moved here).
        for outcome, one in zip(group, params, strict=True):
            row = connection.execute(
                select(_D.sending_token, _D.attempts).where(_D.id == outcome.claim.delivery_id)
            ).first()
            mine = (row is not None and row.sending_token is None
                    and row.attempts == outcome.claim.attempts + 1)
            again = connection.execute(_move_statement(columns), one).rowcount
            done.append((outcome, outcome.decision.state.value if (again or mine) else "lease lost"))
    attempts = [
        _attempt_values(o.claim.delivery_id, o.claim, o.record,
                        state if state != "lease lost" else "SUPERSEDED", at)
        for o, state in done
    ]
    if attempts:
        connection.execute(_INSERT_ATTEMPT, attempts)
    return done


def _flush(notifier: Notifier, run: _Run, *, go_on: bool) -> list[str]:
    """Record the run's outcomes, in one transaction that also keeps the leases of the rows it
    has not sent (``go_on``) and tops its batch up, or gives them back and hands the next due
    row to the broker. Retried in place; returns the recorded states in order."""
    at = now()
    outcomes = [_outcome(notifier, claim, record, at) for claim, record in run.outcomes]
    broker = notifier.services.broker
    # As many rows as the run sends within a window at the endpoint's latency: a slow
    # endpoint's runs lease one row at a time and share its backlog evenly.
    latency_ms = max(0.1, sum(r.latency_ms for _, r in run.outcomes) / max(1, len(run.outcomes)))
    want = max(1, min(notifier.batch, int(notifier.batch_window_s * 1000 / latency_ms)))

    def work() -> tuple[list[tuple[_Outcome, str]], list[_Claim]]:
        with notifier.services.uow() as uow:
            session = uow.session
            connection = session.connection()
            done = _move_all(connection, outcomes, at)
            unsent = [c.delivery_id for c in run.queue]
            fresh: list[_Claim] = []
            if go_on:
                if unsent:
                    connection.execute(_RELEASE, {"b_ids": unsent, "token": run.token,
                                                  "b_until": at + notifier.lease, "b_token": run.token})
                fresh = _lease_more(notifier, session, run, at, want - len(unsent))
            else:
                if unsent:
                    connection.execute(_RELEASE, {"b_ids": unsent, "token": run.token,
                                                  "b_until": None, "b_token": None})
                handed = _hand_on(notifier, session, run, at)
                if handed is not None:
                    uow.after_commit(lambda: actor_messages.send_deliver_webhook(broker, handed))
            uow.commit()
            return done, fresh

    done, fresh = _retrying(f"recording {len(outcomes)} webhook attempts", work)
    run.outcomes = []
    run.leased_at = time.monotonic()
    if go_on:
        run.queue.extend(fresh)
    else:
        run.queue = []
    for outcome, state in done:
        if state == "lease lost":
            continue
        exhausted = (
            outcome.decision.state is DeliveryState.FAILED
            and not outcome.record.refused
            and classify(outcome.record.status_code) is AttemptClass.RETRYABLE
        )
        _record_health(notifier, outcome.claim, outcome.record, exhausted)
    return [state for _, state in done]


def _send_one(notifier: Notifier, run: _Run, claim: _Claim) -> None:
    """Send one leased row of the run; its outcome joins the run's unrecorded ones."""
    started_ms = now_ms()
    clock = time.perf_counter()
    try:
        record = _send(notifier, claim)
    except BaseException as exc:
        # Anything that ends the attempt early (dramatiq's TimeLimitExceeded or Shutdown, a
        # bug) is still an attempt: record it with the others and give the unsent rows back,
        # then let it propagate.
        run.outcomes.append((claim, AttemptRecord(
            started_ms,
            (time.perf_counter() - clock) * 1000.0,
            None,
            error=f"attempt interrupted: {type(exc).__name__}: {exc}"[:500],
        )))
        try:
            _flush(notifier, run, go_on=False)
        except Exception:
            log.exception("could not record the interrupted attempt of delivery %s", claim.delivery_id)
        raise
    run.outcomes.append((claim, record))


def deliver_webhook(notifier: Notifier, delivery_id: str) -> str:
    """Attempt delivery ``delivery_id``, then the endpoint's next due rows for a while;
    returns what happened to ``delivery_id`` (for logs and tests)."""
    at = now()
    peeked = _peek(notifier, delivery_id, at)
    if isinstance(peeked, str):
        return peeked
    endpoint_id = peeked[1]
    if not notifier.slots.take(endpoint_id, notifier.max_in_flight):
        # This process already runs the endpoint's cap of runs: they take this row in turn
        # (they lease the endpoint's due rows whatever their dispatch mark).
        return "endpoint busy"
    try:
        claim = _claim(notifier, delivery_id)
        if isinstance(claim, str):
            if claim == "refused":
                # Taken meanwhile, or the endpoint has its cap of runs in other processes.
                if _peek(notifier, delivery_id, now()) == ("claim", endpoint_id):
                    _give_back(notifier, delivery_id, at)
                    return "endpoint busy"
                return "busy"
            return claim
        endpoint = _Endpoint(claim.url, claim.failing_since, claim.endpoint_read_at)
        run = _Run(claim.token, endpoint_id, endpoint, [claim], time.monotonic())
        deadline = time.monotonic() + notifier.run_budget_s
        first: str | None = None
        while run.queue:
            _send_one(notifier, run, run.queue.pop(0))
            window_over = time.monotonic() - run.leased_at >= notifier.batch_window_s
            if run.queue and not window_over and len(run.outcomes) < notifier.batch:
                continue
            states = _flush(notifier, run, go_on=time.monotonic() < deadline)
            if first is None and states:
                first = states[0]
        return first or "missing"
    finally:
        notifier.slots.release(endpoint_id)


def build_notifier(services: Services, **overrides: Any) -> Notifier:
    """The notifier of this process (its key ring is the worker services' one)."""
    if not isinstance(services, WorkerServices):  # the ring exists only in worker processes
        raise Internal("the notifier runs in worker processes only")
    keys = services.webhook_keys
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
