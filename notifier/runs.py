"""A run: attempts of the outbox rows of one endpoint, started by one ``deliver_webhook``.

:func:`deliver_webhook` peeks at the message's row, takes one of this process's slots for its
endpoint, leases the row (``notifier.leasing``), signs it afresh (new timestamp, same event
id) and POSTs it once over the endpoint's kept-alive connections (``notifier.delivery``),
outside any transaction; it records outcomes in batches (``notifier.recording``), which also
lease the endpoint's next due rows, and sends those next; after a time budget it hands the
endpoint's next due row to the broker instead (fairness between endpoints) and ends. The
endpoint's health follows each record (``notifier.health``).
"""

from __future__ import annotations

import logging
import time

from infra.clock import now, now_ms
from infra.messaging import actor_messages
from infra.webhooks.schedule import (
    AttemptClass,
    DeliveryState,
    classify,
)
from infra.webhooks.signing import sign_delivery
from notifier import health, leasing, recording
from notifier.delivery import AttemptRecord, attempt_delivery
from notifier.leasing import Claim, EndpointRead, Run
from notifier.process import Notifier

log = logging.getLogger(__name__)

def _flush(notifier: Notifier, run: Run, *, go_on: bool) -> list[str]:
    """Record the run's outcomes, in one transaction that also keeps the leases of the rows it
    has not sent (``go_on``) and tops its batch up, or gives them back and hands the next due
    row to the broker. Retried in place; returns the recorded states in order."""
    at = now()
    outcomes = [recording.outcome_of(notifier, claim, record, at) for claim, record in run.outcomes]
    broker = notifier.services.broker
    # As many rows as the run sends within a window at the endpoint's latency: a slow
    # endpoint's runs lease one row at a time and share its backlog evenly.
    latency_ms = max(0.1, sum(r.latency_ms for _, r in run.outcomes) / max(1, len(run.outcomes)))
    want = max(1, min(notifier.batch, int(notifier.batch_window_s * 1000 / latency_ms)))

    def work() -> tuple[list[tuple[recording.Outcome, str]], list[Claim]]:
        with notifier.services.uow() as uow:
            session = uow.session
            connection = session.connection()
            done = recording.move_all(connection, outcomes, at)
            unsent = [c.delivery_id for c in run.queue]
            fresh: list[Claim] = []
            if go_on:
                if unsent:
                    connection.execute(leasing.RELEASE, {"b_ids": unsent, "token": run.token,
                                                  "b_until": at + notifier.lease, "b_token": run.token})
                fresh = leasing.lease_more(notifier, session, run, at, want - len(unsent))
            else:
                if unsent:
                    connection.execute(leasing.RELEASE, {"b_ids": unsent, "token": run.token,
                                                  "b_until": None, "b_token": None})
                handed = leasing.hand_on(notifier, session, run, at)
                if handed is not None:
                    uow.after_commit(lambda: actor_messages.send_deliver_webhook(broker, handed))
            uow.commit()
            return done, fresh

    done, fresh = recording.retrying(f"recording {len(outcomes)} webhook attempts", work)
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
        health.record_health(notifier, outcome.claim, outcome.record, exhausted)
    return [state for _, state in done]


def _send_one(notifier: Notifier, run: Run, claim: Claim) -> None:
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


def _send(notifier: Notifier, claim: Claim) -> AttemptRecord:
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


def deliver_webhook(notifier: Notifier, delivery_id: str) -> str:
    """Attempt delivery ``delivery_id``, then the endpoint's next due rows for a while;
    returns what happened to ``delivery_id`` (for logs and tests)."""
    at = now()
    peeked = leasing.peek(notifier, delivery_id, at)
    if isinstance(peeked, str):
        return peeked
    endpoint_id = peeked[1]
    if not notifier.slots.take(endpoint_id, notifier.max_in_flight):
        # This process already runs the endpoint's cap of runs: they take this row in turn
        # (they lease the endpoint's due rows whatever their dispatch mark).
        return "endpoint busy"
    try:
        claim = leasing.lease(notifier, delivery_id)
        if isinstance(claim, str):
            if claim == "refused":
                # Taken meanwhile, or the endpoint has its cap of runs in other processes.
                if leasing.peek(notifier, delivery_id, now()) == ("claim", endpoint_id):
                    leasing.give_back(notifier, delivery_id, at)
                    return "endpoint busy"
                return "busy"
            return claim
        endpoint = EndpointRead(claim.url, claim.failing_since, claim.endpoint_read_at)
        run = Run(claim.token, endpoint_id, endpoint, [claim], time.monotonic())
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
