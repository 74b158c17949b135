"""The consensus pool's actors: votes, and the hand-back of older messages.

Votes (``approve_activity`` / ``reject_activity``) are activities of this pool: like every
activity they are decided and executed in one transaction (``run_activity``). Executing a
vote records it; an approval of an activity waiting in CONSENSUS_NEEDED moves that activity
back to PENDING and hands it to its own pool, which decides it again against the votes it
now has (``infra.pipeline.votes.cast_vote``); a rejection ends it REJECTED.

``evaluate_activity`` is the message walletd sent before each pool decided its own
activities; a message of that name still in a queue during an upgrade is handed on to its
activity's pool, so nothing is lost.
"""

from __future__ import annotations

import dramatiq
from sqlalchemy import select

from infra.activities import registry
from infra.db.models.activities import Activity
from infra.messaging import actor_messages
from infra.pipeline import lifecycle
from infra.pipeline.execute import MAX_RETRIES, retry_when, run_activity
from infra.services import Services


def hand_to_pool(services: Services, activity_id: str) -> str | None:
    """Send a PENDING activity's execute message to its pool; returns the pool."""
    with services.read_session_factory() as session:
        row = session.execute(select(Activity.type, Activity.status)
                              .where(Activity.id == activity_id)).first()
    if row is None or row.status != lifecycle.PENDING:
        return None
    found = registry().by_type.get(row.type)
    if found is None:
        return None
    actor_messages.send_execute_activity(services.broker, activity_id, found[0].pool)
    return found[0].pool


def declare(services: Services) -> list[dramatiq.Actor[[str], None]]:
    """Declare the consensus pool's actors on ``services.broker``."""

    def _execute(activity_id: str) -> None:
        run_activity(services, activity_id)

    def _evaluate(activity_id: str) -> None:
        hand_to_pool(services, activity_id)

    actors: list[dramatiq.Actor[[str], None]] = []
    for name, fn in ((actor_messages.EXECUTE_VOTE_ACTIVITY, _execute),
                     (actor_messages.EVALUATE_ACTIVITY, _evaluate)):
        actors.append(dramatiq.actor(
            broker=services.broker, actor_name=name, queue_name=actor_messages.ACTORS[name],
            # Only infrastructure failures reach the broker; retry them quickly, bounded.
            max_retries=MAX_RETRIES, min_backoff=100, max_backoff=30_000, time_limit=60_000,
            retry_when=retry_when,
        )(fn))
    return actors
