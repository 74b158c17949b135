"""The ``deliver_webhook(delivery_id)`` actor: attempts of the outbox rows of one endpoint.

The notifier by concept: the process's notifier (``notifier.process``) and its per-endpoint
memory (``notifier.memory``), leases on rows (``notifier.leasing``), a run over an endpoint
(``notifier.runs``), recording attempts (``notifier.recording``), the endpoint's health
(``notifier.health``), one HTTP attempt (``notifier.delivery``), the relay of due rows
(``notifier.sweeper``, ``notifier.dispatch``).

The row, not the message, is the truth. A message starts a *run* on the row's endpoint:

1. a cheap read of the row says whether there is anything to do (a stray or late copy of a
   message costs one SELECT); a run needs one of this process's slots for the endpoint;
2. the row is leased with one conditional UPDATE (``sending_until``/``sending_token``): only a
   due, unleased ``PENDING`` row whose endpoint has room (:func:`endpoint_has_room`, checked
   under an advisory lock on PostgreSQL) can be leased, so a redelivered or duplicated message
   never sends a delivery that already succeeded or failed, and two copies cannot send at once;
3. the row is signed afresh (new timestamp, same event id) and POSTed once over the
   endpoint's kept-alive connections (``notifier.delivery``), outside any transaction;
4. one transaction records the attempt and moves the row by the retry schedule and, in the
   same statement order every time (this row by id, then the attempt, then at most one other
   row of the endpoint with ``SKIP LOCKED``), leases the endpoint's next due row, which the run
   sends next (step 3). Nothing in it waits for a lock held by a transaction that could wait
   for this one, so it cannot deadlock; a deadlock or serialization failure all the same, or a
   lost connection, is retried in place (the receiver's answer is never dropped for it);
5. after a time budget the run hands the endpoint's next due row to the broker instead
   (fairness between endpoints: the message queues behind the others') and ends.

The endpoint's health (``failing_since``) is written after the record commits, in a
transaction of its own, and only when it changes state; a failure right after a success seen
by this process is not written (a flapping endpoint costs one write a minute, not one per
attempt). The first success of a failing endpoint makes its waiting deliveries due at once,
so a backlog drains at the receiver's pace as soon as it answers again.

If the process dies during step 3 the lease expires and the relay (``notifier.sweeper``)
dispatches the row again: the receiver may then see the event twice, with the same event id
(at-least-once, as every webhook system documents). Nothing else sends an event twice.
"""

from __future__ import annotations

import logging

import dramatiq

from infra.messaging import actor_messages
from infra.pipeline.execute import MAX_RETRIES, retry_when
from infra.services import Services
from notifier.health import update_health as _update_health
from notifier.leasing import Claim as _Claim
from notifier.process import Notifier, build_notifier
from notifier.runs import deliver_webhook

# ``_Claim`` and ``_update_health`` under their former names, for the webhook tests.
__all__ = ["Notifier", "_Claim", "_update_health", "build_notifier", "declare", "deliver_webhook"]

log = logging.getLogger(__name__)


def declare(services: Services, notifier: Notifier | None = None) -> list[dramatiq.Actor[[str], None]]:
    """Declare ``deliver_webhook`` on ``services.broker`` (tests may pass their notifier)."""
    notifier = notifier or build_notifier(services)

    def _deliver(delivery_id: str) -> None:
        outcome = deliver_webhook(notifier, delivery_id)
        log.debug("webhook delivery %s: %s", delivery_id, outcome)

    decorate = dramatiq.actor(
        broker=services.broker,
        actor_name=actor_messages.DELIVER_WEBHOOK,
        queue_name=actor_messages.ACTORS[actor_messages.DELIVER_WEBHOOK],
        # Only infrastructure failures (database down) reach the broker; HTTP outcomes are
        # recorded on the row and rescheduled by the retry schedule, never raised.
        max_retries=MAX_RETRIES,
        min_backoff=500,
        max_backoff=60_000,
        time_limit=int(notifier.lease.total_seconds() * 1000) + 30_000,
        retry_when=retry_when,
    )
    actor: dramatiq.Actor[[str], None] = decorate(_deliver)
    return [actor]
