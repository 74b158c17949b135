"""Deciding and executing an activity exactly once, in one transaction.

The pool an activity belongs to claims it (status guard + row lock), decides it against
root quorum, policies and votes (``infra.pipeline.decide``) and then, in the same
transaction, either executes it and records the result with COMPLETED, or parks it in
CONSENSUS_NEEDED, or fails it as denied: no policy change can land between the decision and
the effect. A redelivered message finds the activity no longer PENDING and does nothing.
Domain errors (``WalletError``) end the activity FAILED with a ``failure`` body and are never
retried; database connectivity errors propagate so the broker retries the message; anything
else is a bug, logged and recorded as an INTERNAL failure without details. That includes
permanent database errors (``DataError``, ``IntegrityError``, ``ProgrammingError``), also when
they surface at the final flush or commit: retrying them could only fail again, and the
sweeper would re-send the message for ever. The failure is recorded on a fresh session from
ids held in locals, so nothing of the failed transaction is touched again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.activities.spec import ActivityContext
from infra.clock import now
from infra.db.activity_rows import ActivityRow
from infra.db.unit_of_work import UnitOfWork
from infra.errors import Internal, PolicyDenied, Sealed, WalletError
from infra.messaging import queues
from infra.pipeline import decide, engine, lifecycle, mfa, store
from infra.services import Services
from infra.views.activities import render_settled

log = logging.getLogger(__name__)

#: Database errors that mean "could not talk to the database", worth a broker retry.
TRANSIENT = (OperationalError, InterfaceError)
#: How often an actor re-runs a message that hit a transient database error.
MAX_RETRIES = 10


def is_transient(ex: BaseException) -> bool:
    """Whether ``ex`` is a connectivity problem (retry) rather than a permanent error.

    Lost connections, timeouts, locks and serialization failures (``OperationalError``),
    driver-level interface errors, and any DBAPI error that invalidated its connection
    are transient. ``DataError``, ``IntegrityError``, ``ProgrammingError`` and everything
    that is not a database error are not: the same message would fail the same way again.
    """
    if isinstance(ex, TRANSIENT):
        return True
    return isinstance(ex, DBAPIError) and bool(ex.connection_invalidated)


def retry_when(retries: int, ex: BaseException) -> bool:
    """The ``retry_when`` of every actor: transient database errors and a sealed process (the
    activity stays PENDING; the sweeper re-sends it after the retries), at most
    ``MAX_RETRIES``."""
    return (is_transient(ex) or isinstance(ex, Sealed)) and retries < MAX_RETRIES


def run_activity(services: Services, activity_id: str) -> str | None:
    """Decide and execute ``activity_id`` if it is PENDING; return the status it ended in."""
    activity_type = "?"  # a plain local: the failure path never reads the failed session
    try:
        with services.uow() as uow:
            ballot = decide.claim(uow.session, activity_id)
            if ballot is None:
                return None
            activity = ballot.activity
            activity_type = activity.type
            status = _settle(services, uow, ballot)
            uow.commit()
            return status
    except Sealed:
        # Never reached by a sealed worker (it consumes no key-needing queue); a process
        # sealed mid-flight leaves the activity PENDING and the message to be retried.
        log.warning("activity %s (%s) waits: this process is sealed", activity_id, activity_type)
        raise
    except WalletError as err:
        failure = err.to_wire()
    except Exception as ex:
        if is_transient(ex):
            raise
        log.exception("activity %s (%s) crashed", activity_id, activity_type)
        failure = Internal("internal error while executing the activity").to_wire()
    return fail_activity(services, activity_id, failure)


def _settle(services: Services, uow: UnitOfWork, ballot: decide.ClaimedActivity) -> str:
    """Decide the claimed activity and move it to where the decision leads."""
    activity = ballot.activity
    # Inside the guard: an intent stored under older rules that no longer validates is
    # recorded as a failure rather than crashing every redelivery.
    spec, version = registry().by_type[activity.type]
    session = uow.session
    # MFA (infra.pipeline.mfa): the proposer authenticates again before anything is decided.
    if mfa.proposer_waiting(session, activity, ballot.submitter, spec.consensus_vote):
        store.transition(uow, activity, lifecycle.AUTHENTICATORS_NEEDED, votes=ballot.votes)
        return lifecycle.AUTHENTICATORS_NEEDED
    decision = decide.decide(session, ballot, spec)
    evaluation, votes = decision.evaluation, decision.votes
    if decision.outcome == "consensus_needed":
        store.transition(uow, activity, lifecycle.CONSENSUS_NEEDED, votes=votes,
                         evaluation=evaluation)
        return lifecycle.CONSENSUS_NEEDED
    if decision.outcome == "deny":
        failure = PolicyDenied(decision.reason or engine.IMPLICIT_DENY_MESSAGE)
        store.transition(uow, activity, lifecycle.FAILED, failure=failure.to_wire(),
                         votes=votes, evaluation=evaluation)
        return lifecycle.FAILED
    params = version.params.model_validate(activity.intent[version.intent_key])
    ctx = ActivityContext(uow=uow, activity=activity,
                          organization_id=activity.organization_id,
                          user_id=activity.user_id, version=version, now=now(),
                          services=services)
    body = spec.execute(params, ctx)
    store.transition(uow, activity, lifecycle.COMPLETED,
                     result={version.result_key: body}, votes=votes, evaluation=evaluation,
                     answer=_answer(session, ballot) if spec.pool == queues.SIGNING else None)
    return lifecycle.COMPLETED


def _answer(session: Session, ballot: decide.ClaimedActivity) -> Callable[[ActivityRow], str | None]:
    """The settled signature's rendering for the waiting ingress (``lifecycle.ANSWER_CHANNEL``).

    Signing changes nothing a view shows but the activity itself, so the ballot read by the
    claim renders it. Should anything have been written through the session by the effect
    (or rows by a listener, ``infra.pipeline.store.transition``), nothing travels and the
    ingress reads the activity.
    """
    def render(activity: ActivityRow) -> str | None:
        if session.new or session.dirty or session.deleted:
            return None
        view = render_settled(session, activity, ballot.votes, list(ballot.voters.values()))
        return f"{activity.id} {json.dumps(view, separators=(',', ':'))}"
    return render


def fail_activity(services: Services, activity_id: str, failure: dict[str, object],
                  expected: str = lifecycle.PENDING) -> str | None:
    """Record ``failure`` on a PENDING activity in a fresh transaction (effects discarded)."""
    with services.uow() as uow:
        activity = store.claim_status(uow.session, activity_id, expected)
        if activity is None:
            return None
        store.transition(uow, activity, lifecycle.FAILED, failure=dict(failure))
        uow.commit()
    return lifecycle.FAILED
