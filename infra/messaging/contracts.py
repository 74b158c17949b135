"""Messages between processes, sent by actor *name* (packages never import each other).

Messages carry ids only. The actors implementing these names live in ``consensus.actors``,
``workers.actors`` and ``notifier.actors``.
"""

from __future__ import annotations

from typing import Final

import dramatiq

from infra.messaging import queues

EVALUATE_ACTIVITY: Final = "evaluate_activity"
EXECUTE_SIGNING_ACTIVITY: Final = "execute_signing_activity"
EXECUTE_ACCOUNT_ACTIVITY: Final = "execute_account_activity"
DELIVER_WEBHOOK: Final = "deliver_webhook"

#: actor name -> queue
ACTORS: Final = {
    EVALUATE_ACTIVITY: queues.CONSENSUS,
    EXECUTE_SIGNING_ACTIVITY: queues.SIGNING,
    EXECUTE_ACCOUNT_ACTIVITY: queues.ACCOUNTS,
    DELIVER_WEBHOOK: queues.NOTIFICATIONS,
}

_EXECUTOR_BY_POOL: Final = {
    queues.SIGNING: EXECUTE_SIGNING_ACTIVITY,
    queues.ACCOUNTS: EXECUTE_ACCOUNT_ACTIVITY,
}


def _send(broker: dramatiq.Broker, actor_name: str, *args: str, delay_ms: int | None = None) -> None:
    message: dramatiq.Message[None] = dramatiq.Message(
        queue_name=ACTORS[actor_name], actor_name=actor_name, args=args, kwargs={}, options={}
    )
    broker.enqueue(message, delay=delay_ms)


def send_evaluate_activity(broker: dramatiq.Broker, activity_id: str) -> None:
    """Ask the consensus pool to decide whether ``activity_id`` may run."""
    _send(broker, EVALUATE_ACTIVITY, activity_id)


def send_execute_activity(broker: dramatiq.Broker, activity_id: str, pool: str) -> None:
    """Ask the activity's pool to execute it."""
    _send(broker, _EXECUTOR_BY_POOL[pool], activity_id)


def send_deliver_webhook(broker: dramatiq.Broker, delivery_id: str, delay_ms: int | None = None) -> None:
    """Ask the notifier to attempt a webhook delivery (optionally later)."""
    _send(broker, DELIVER_WEBHOOK, delivery_id, delay_ms=delay_ms)
