"""The consensus actor: ``evaluate_activity(activity_id)``.

Loads the activity, decides, moves its state and, when allowed, hands it to its pool.
Idempotent: only a PENDING activity is evaluated, and one that was already allowed is not
decided again: its execute is re-sent (the sweeper's recovery of a lost message), which the
executor's status guard ignores if the first one arrived.
"""

from __future__ import annotations

import logging

import dramatiq
from sqlalchemy import select
from sqlalchemy.orm import Session

from consensus import evaluation
from consensus.engine import Outcome
from infra.activities import lifecycle, registry
from infra.bootstrap import Services
from infra.db.models.policies import PolicyEvaluation
from infra.errors import Internal, PolicyDenied
from infra.execution import MAX_RETRIES, fail_activity, is_transient, retry_when
from infra.messaging import contracts

log = logging.getLogger(__name__)

#: Outcome of a redelivered evaluation of an activity that was allowed already.
HANDED_OFF = "handed_off"


def evaluate_activity(services: Services, activity_id: str) -> str | None:
    """Decide on ``activity_id``; returns the outcome, or ``None`` if it was not PENDING.

    Transient database errors propagate (the broker retries); anything else is a bug that
    would fail the same way on every redelivery and sweep, so the activity is recorded
    FAILED with an INTERNAL failure (outcome ``"error"``).
    """
    try:
        return _decide_and_hand_off(services, activity_id)
    except Exception as ex:
        if is_transient(ex):
            raise
        log.exception("evaluating activity %s crashed", activity_id)
        failure = Internal("internal error while evaluating the activity").to_wire()
        return "error" if fail_activity(services, activity_id, failure) else None


def _decide_and_hand_off(services: Services, activity_id: str) -> str | None:
    with services.uow() as uow:
        activity = lifecycle.claim(uow.session, activity_id, lifecycle.PENDING)
        if activity is None:
            return None
        spec, _ = registry().by_type[activity.type]
        if _allowed_before(uow.session, activity_id):
            # A redelivered or swept message for an activity already handed to its pool:
            # send the execute again (recovers a lost one; the executor's status guard makes
            # a duplicate harmless) without deciding or recording a second evaluation.
            uow.after_commit(
                lambda: contracts.send_execute_activity(services.broker, activity_id, spec.pool))
            uow.commit()
            return HANDED_OFF
        decision = evaluation.decide(uow.session, activity, spec)
        if decision.outcome == "allow":
            uow.after_commit(
                lambda: contracts.send_execute_activity(services.broker, activity_id, spec.pool))
        elif decision.outcome == "consensus_needed":
            lifecycle.transition(uow.session, activity, lifecycle.CONSENSUS_NEEDED)
        else:
            failure = PolicyDenied(decision.reason or "policy engine denied request implicitly")
            lifecycle.transition(uow.session, activity, lifecycle.FAILED,
                                 failure=failure.to_wire())
        uow.commit()
        return decision.outcome


def _allowed_before(session: Session, activity_id: str) -> bool:
    """Whether consensus already allowed ``activity_id`` (it was handed to its pool)."""
    return session.scalar(
        select(PolicyEvaluation.id).where(PolicyEvaluation.activity_id == activity_id,
                                          PolicyEvaluation.outcome == Outcome.ALLOW.value)
        .limit(1)) is not None


def declare(services: Services) -> list[dramatiq.Actor[[str], None]]:
    """Declare the consensus actors on ``services.broker``."""

    def _evaluate(activity_id: str) -> None:
        evaluate_activity(services, activity_id)

    actor: dramatiq.Actor[[str], None] = dramatiq.actor(
        broker=services.broker,
        actor_name=contracts.EVALUATE_ACTIVITY,
        queue_name=contracts.ACTORS[contracts.EVALUATE_ACTIVITY],
        # Only infrastructure failures reach the broker; retry them quickly, bounded.
        max_retries=MAX_RETRIES, min_backoff=100, max_backoff=30_000, time_limit=60_000,
        retry_when=retry_when,
    )(_evaluate)
    return [actor]
