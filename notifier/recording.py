"""Recording attempts: each outcome moves its row by the retry schedule and logs the attempt.

One transaction per batch, in the same statement order every time (the rows by id, then the
attempts), so it cannot deadlock with another run; a deadlock or serialization failure all
the same, or a lost connection, is retried in place (:func:`retrying`): the receiver's answer
is never dropped for it. A row whose lease was lost meanwhile is recorded as superseded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import DBAPIError

from infra.clock import new_id
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery
from infra.pipeline.execute import is_transient
from infra.webhooks.schedule import (
    DeliveryState,
    DeliveryUpdate,
    decide,
)
from notifier.delivery import AttemptRecord
from notifier.leasing import DELIVERIES, PENDING, Claim
from notifier.process import Notifier

log = logging.getLogger(__name__)

_D = DELIVERIES.c
#: How long recording an outcome is retried in place on deadlocks and lost connections
#: (a PostgreSQL restart) before giving up (the lease then expires; the relay sends again).
RECORD_RETRY_S = 30.0


#: SQLSTATEs of a deadlock and a serialization failure.
_RETRY_STATES = frozenset({"40P01", "40001"})


T = TypeVar("T")


def retrying(what: str, work: Callable[[], T], *, budget_s: float = RECORD_RETRY_S) -> T:
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


_ATTEMPTS: Table = WebhookAttempt.__table__  # type: ignore[assignment]


_INSERT_ATTEMPT = insert(_ATTEMPTS)


@lru_cache(maxsize=32)
def move_statement(columns: frozenset[str]) -> Any:
    """``UPDATE`` of the leased row with these columns (built once per column set: building
    a statement costs about as much as running it)."""
    computed = {"attempts": _D.attempts + 1, "schedule_attempts": _D.schedule_attempts + 1,
                "version": _D.version + 1}
    return (
        update(DELIVERIES)
        .where(_D.id == bindparam("delivery_id"), _D.sending_token == bindparam("token"),
               _D.status == PENDING)
        .values({name: computed.get(name, bindparam(f"v_{name}")) for name in sorted(columns)})
    )


def row_changes(notifier: Notifier, decision: DeliveryUpdate,
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


def attempt_values(
    delivery_id: str, claim: Claim, record: AttemptRecord, outcome: str, at: datetime
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


@dataclass(frozen=True)
class Outcome:
    """An attempt's decision and the row changes it makes."""

    claim: Claim
    record: AttemptRecord
    decision: DeliveryUpdate
    values: dict[str, Any]
    delay_ms: int | None


def outcome_of(notifier: Notifier, claim: Claim, record: AttemptRecord, at: datetime) -> Outcome:
    decision = decide(
        notifier.schedule,
        attempts_made=claim.schedule_attempts + 1,
        status_code=record.status_code,
        now_ms=int(at.timestamp() * 1000),
        jitter_key=claim.delivery_id,
        retry_after_s=record.retry_after_s,
        unsafe=record.refused,
    )
    values, delay_ms = row_changes(notifier, decision, at)
    values.update(last_status_code=record.status_code, last_error=record.error or None)
    return Outcome(claim, record, decision, values, delay_ms)


def move_params(outcome: Outcome) -> dict[str, Any]:
    params = {f"v_{name}": value for name, value in outcome.values.items() if not hasattr(value, "compile")}
    params.update(delivery_id=outcome.claim.delivery_id, token=outcome.claim.token)
    return params


def move_all(connection: Any, outcomes: list[Outcome], at: datetime) -> list[tuple[Outcome, str]]:
    """Move every row by its outcome and log its attempt; per outcome, what it recorded
    (its new state, or ``lease lost`` when the row was not this run's any more)."""
    groups: dict[frozenset[str], list[Outcome]] = {}
    for outcome in sorted(outcomes, key=lambda o: o.claim.delivery_id):
        groups.setdefault(frozenset(outcome.values), []).append(outcome)
    done: list[tuple[Outcome, str]] = []
    for columns, group in groups.items():
        params = [move_params(o) for o in group]
        moved = connection.execute(move_statement(columns), params)
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
            again = connection.execute(move_statement(columns), one).rowcount
            done.append((outcome, outcome.decision.state.value if (again or mine) else "lease lost"))
    attempts = [
        attempt_values(o.claim.delivery_id, o.claim, o.record,
                        state if state != "lease lost" else "SUPERSEDED", at)
        for o, state in done
    ]
    if attempts:
        connection.execute(_INSERT_ATTEMPT, attempts)
    return done
