"""The consensus actor: ``evaluate_activity(activity_id)``.

Loads the activity, decides, moves its state and, when allowed, hands it to its pool.
Idempotent: only a PENDING activity is evaluated, and re-evaluating one that was already
handed off sends a duplicate execute that the executor's status guard ignores.
"""

from __future__ import annotations

import dramatiq

from consensus import evaluation
from infra.activities import lifecycle, registry
from infra.bootstrap import Services
from infra.errors import PolicyDenied
from infra.execution import TRANSIENT
from infra.messaging import contracts


def evaluate_activity(services: Services, activity_id: str) -> str | None:
    """Decide on ``activity_id``; returns the outcome, or ``None`` if it was not PENDING."""
    with services.uow() as uow:
        activity = lifecycle.claim(uow.session, activity_id, lifecycle.PENDING)
        if activity is None:
            return None
        spec, _ = registry().by_type[activity.type]
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


def declare(services: Services) -> list[dramatiq.Actor[[str], None]]:
    """Declare the consensus actors on ``services.broker``."""

    def _evaluate(activity_id: str) -> None:
        evaluate_activity(services, activity_id)

    actor: dramatiq.Actor[[str], None] = dramatiq.actor(
        broker=services.broker,
        actor_name=contracts.EVALUATE_ACTIVITY,
        queue_name=contracts.ACTORS[contracts.EVALUATE_ACTIVITY],
        # Only infrastructure failures reach the broker; retry them quickly, bounded.
        max_retries=10, min_backoff=100, max_backoff=30_000, time_limit=60_000,
        retry_when=lambda retries, ex: isinstance(ex, TRANSIENT) and retries < 10,
    )(_evaluate)
    return [actor]
