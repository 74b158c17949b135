"""Leases on delivery rows: who may send a row, and for how long.

A message's row is peeked at first (one cheap SELECT says whether there is anything to do),
then leased with one conditional UPDATE (``sending_until``/``sending_token``): only a due,
unleased ``PENDING`` row whose endpoint has room can be leased, so a redelivered or
duplicated message never sends a delivery that already succeeded or failed, and two copies
cannot send at once. A :class:`Run` holds the rows it leased under one token; it leases the
endpoint's next due rows as it goes (``SKIP LOCKED``), keeps or gives back those it has not
sent, and hands the endpoint on to the broker when its time is up.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, bindparam, distinct, func, or_, select, text, update

from infra.clock import as_utc, new_id, now
from infra.db.models.webhooks import WebhookDelivery, WebhookEndpoint
from infra.webhooks.schedule import (
    DeliveryState,
)
from notifier.delivery import AttemptRecord
from notifier.process import Notifier

log = logging.getLogger(__name__)

#: A message may arrive this much before the row's due time and still be acted on.
EARLY_SLACK = timedelta(seconds=1)


#: Namespace of the PostgreSQL advisory locks that serialize claims per endpoint.
_CLAIM_LOCK_SPACE = 0x57484B31


#: How long an endpoint's URL and state read by a run are used before being read again.
ENDPOINT_FRESH_S = 1.0


@dataclass(frozen=True)
class EndpointRead:
    """An endpoint as a run read it."""

    url: str
    failing_since: datetime | None
    read_at: float


@dataclass(frozen=True)
class Claim:
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


DELIVERIES: Table = WebhookDelivery.__table__  # type: ignore[assignment]


_D = DELIVERIES.c


PENDING = DeliveryState.PENDING.value


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


_other = DELIVERIES.alias("other")


#: Runs sending to the row's endpoint: a run's leased rows share its token.
_SENDING = (
    select(func.count(distinct(_other.c.sending_token)))
    .select_from(_other)
    .where(
        _other.c.endpoint_id == _D.endpoint_id,
        _other.c.status == PENDING,
        _other.c.sending_until >= bindparam("at"),
    )
    .scalar_subquery()
)


#: Lease one row by id: due, unleased, PENDING, and its endpoint below its cap of runs.
_CLAIM = (
    update(DELIVERIES)
    .where(
        _D.id == bindparam("delivery_id"),
        _D.status == PENDING,
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
        _D.status == PENDING,
        _D.next_attempt_at <= bindparam("at"),
        _unleased,
    )
    .order_by(_D.next_attempt_at, _D.id)
    .limit(bindparam("b_limit"))
    .with_for_update(skip_locked=True)
)


_LEASE_MORE = (
    update(DELIVERIES)
    .where(_D.id.in_(_NEXT_DUE))
    .values(**_LEASE_VALUES)
    .returning(*_LEASED_COLUMNS)
)


#: Keep (``b_until`` a time) or give back (``None``) the rows a run leased and did not send.
RELEASE = (
    update(DELIVERIES)
    .where(_D.id.in_(bindparam("b_ids", expanding=True)), _D.sending_token == bindparam("token"),
           _D.status == PENDING)
    .values(sending_until=bindparam("b_until"), sending_token=bindparam("b_token"))
)


_HAND_ON = (
    update(DELIVERIES)
    .where(_D.id.in_(_NEXT_DUE))
    .values(dispatched_until=bindparam("b_dispatched"))
    .returning(_D.id)
)


def claim_of(row: Any, endpoint: EndpointRead, token: str) -> Claim:
    return Claim(
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


def read_endpoint(notifier: Notifier, session: Any, endpoint_id: str) -> EndpointRead | None:
    """The endpoint's URL and health if it is active (``None`` otherwise)."""
    endpoint = session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or not endpoint.is_active:
        return None
    notifier.health.observe(endpoint_id, endpoint.failing_since)
    return EndpointRead(endpoint.url, endpoint.failing_since, time.monotonic())


def fail_inactive(session: Any, delivery_id: str, token: str) -> None:
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


def peek(notifier: Notifier, delivery_id: str, at: datetime) -> str | tuple[str, str]:
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


def give_back(notifier: Notifier, delivery_id: str, at: datetime) -> None:
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


def lease(notifier: Notifier, delivery_id: str) -> Claim | str:
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
        endpoint = read_endpoint(notifier, session, row.endpoint_id)
        if endpoint is None:
            fail_inactive(session, delivery_id, token)
            uow.commit()
            return "endpoint inactive"
        uow.commit()
        return claim_of(row, endpoint, token)


@dataclass
class Run:
    """One run of an endpoint: the rows it leased (under its token) and has not sent yet,
    and the outcomes it has not recorded yet."""

    token: str
    endpoint_id: str
    endpoint: EndpointRead
    queue: list[Claim]
    leased_at: float
    outcomes: list[tuple[Claim, AttemptRecord]] = field(default_factory=list)


def lease_more(notifier: Notifier, session: Any, run: Run, at: datetime, count: int) -> list[Claim]:
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
        endpoint = read_endpoint(notifier, session, run.endpoint_id)
        if endpoint is None:
            for row in rows:
                fail_inactive(session, row.id, run.token)
            return []
        run.endpoint = endpoint
    claims = [claim_of(row, run.endpoint, run.token) for row in rows]
    claims.sort(key=lambda c: c.delivery_id)
    return claims


def hand_on(notifier: Notifier, session: Any, run: Run, at: datetime) -> str | None:
    """Mark the endpoint's next due row dispatched; its id, to send after the commit."""
    handed = session.connection().execute(_HAND_ON, {
        "b_endpoint": run.endpoint_id, "at": at, "b_limit": 1,
        "b_dispatched": at + notifier.dispatch_grace,
    }).scalar()
    return str(handed) if handed is not None else None
