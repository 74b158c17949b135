"""Messages between processes, sent by actor *name* (packages never import each other).

Messages carry ids only. One message per activity: the ingress sends ``execute_*_activity``
to the activity's own pool, whose executor decides and executes it in one transaction
(``infra.pipeline.execute.run_activity``). Votes (approve/reject) run on the consensus pool.
The actors implementing these names live in ``consensus.actors``, ``workers.actors`` and
``notifier.actors``.
"""

from __future__ import annotations

from typing import Final

import dramatiq

from infra.messaging import queues

EXECUTE_VOTE_ACTIVITY: Final = "execute_vote_activity"
EXECUTE_SIGNING_ACTIVITY: Final = "execute_signing_activity"
EXECUTE_ACCOUNT_ACTIVITY: Final = "execute_account_activity"
DELIVER_WEBHOOK: Final = "deliver_webhook"
#: Sent by walletd before activities were decided by their own pool; still consumed (the
#: consensus pool hands such a message's activity to its pool) so a rolling upgrade loses
#: nothing. Nothing sends it any more.
EVALUATE_ACTIVITY: Final = "evaluate_activity"

#: actor name -> queue
ACTORS: Final = {
    EXECUTE_VOTE_ACTIVITY: queues.CONSENSUS,
    EXECUTE_SIGNING_ACTIVITY: queues.SIGNING,
    EXECUTE_ACCOUNT_ACTIVITY: queues.ACCOUNTS,
    DELIVER_WEBHOOK: queues.NOTIFICATIONS,
    EVALUATE_ACTIVITY: queues.CONSENSUS,
}

#: pool (queue) -> the executor actor consuming it
EXECUTOR_BY_POOL: Final = {
    queues.CONSENSUS: EXECUTE_VOTE_ACTIVITY,
    queues.SIGNING: EXECUTE_SIGNING_ACTIVITY,
    queues.ACCOUNTS: EXECUTE_ACCOUNT_ACTIVITY,
}


def _send(broker: dramatiq.Broker, actor_name: str, *args: str, delay_ms: int | None = None) -> None:
    message: dramatiq.Message[None] = dramatiq.Message(
        queue_name=ACTORS[actor_name], actor_name=actor_name, args=args, kwargs={}, options={}
    )
    broker.enqueue(message, delay=delay_ms)


def send_execute_activity(broker: dramatiq.Broker, activity_id: str, pool: str) -> None:
    """Ask the activity's pool to decide and execute it."""
    _send(broker, EXECUTOR_BY_POOL[pool], activity_id)


def send_deliver_webhook(broker: dramatiq.Broker, delivery_id: str, delay_ms: int | None = None) -> None:
    """Ask the notifier to attempt a webhook delivery (optionally later)."""
    _send(broker, DELIVER_WEBHOOK, delivery_id, delay_ms=delay_ms)
