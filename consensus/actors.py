"""The consensus actor: ``evaluate_activity(activity_id)``.

Loads the activity, decides, moves its state and, when allowed, hands it to its pool.
Idempotent: only a PENDING activity is evaluated, and one that was already allowed is not
decided again: its execute is re-sent (the sweeper's recovery of a lost message), which the
executor's status guard ignores if the first one arrived.
"""

from __future__ import annotations

import logging
from typing import Final

import dramatiq
from sqlalchemy import bindparam, select

from infra.activities import registry
from infra.bootstrap import Services
from infra.db.models.policies import PolicyEvaluation
from infra.errors import Internal, PolicyDenied
from infra.messaging import contracts
from infra.pipeline import decide as evaluation
from infra.pipeline import lifecycle
from infra.pipeline.engine import Outcome
from infra.pipeline.execute import MAX_RETRIES, fail_activity, is_transient, retry_when

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
        claimed = lifecycle.claim_with(uow.session, _CLAIM_NOTING_ALLOWED, activity_id,
                                       lifecycle.PENDING)
        if claimed is None:
            return None
        activity, allowed_before = claimed[0], bool(claimed[1])
        spec, _ = registry().by_type[activity.type]
        if allowed_before:
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


#: The claim, also telling whether consensus already allowed the activity (handed it to
#: its pool): one round trip instead of two.
_CLAIM_NOTING_ALLOWED: Final = lifecycle.claim_statement(
    select(PolicyEvaluation.id)
    .where(PolicyEvaluation.activity_id == bindparam("activity_id"),
           PolicyEvaluation.outcome == Outcome.ALLOW.value)
    .exists()
    .label("allowed_before")
)


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
