"""The outbox relay: hands due delivery rows to the broker.

Rows are written by the activity's own transaction, which has no broker at hand, so a loop
in the notifier process polls for ``PENDING`` rows that are due, not being sent, and not
already dispatched, marks them dispatched (``dispatched_until``) and sends
``deliver_webhook(id)`` after the commit. The same query recovers anything a crash or a lost
broker message left behind: a dispatch that was not acted on within the grace period, or a
sending lease that expired because the notifier died mid-request. Duplicated messages are
harmless: the actor acts only on a due, unleased ``PENDING`` row. Rows whose endpoint already
has its cap of deliveries in flight (``notifier.actors.MAX_IN_FLIGHT_PER_ENDPOINT``) wait here
until it has room, rather than being sent only to be pushed back.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from sqlalchemy import or_, select, update

from infra.bootstrap import Services
from infra.clock import now
from infra.db.models.webhooks import WebhookDelivery
from infra.messaging import contracts
from infra.webhooks.schedule import DeliveryState
from notifier.actors import MAX_IN_FLIGHT_PER_ENDPOINT, endpoint_has_room

log = logging.getLogger(__name__)

#: Poll interval while idle; after finding work the relay polls again at once.
POLL_S = 0.05
BATCH = 200


def relay_once(
    services: Services,
    *,
    grace: timedelta,
    limit: int = BATCH,
    per_endpoint: int = MAX_IN_FLIGHT_PER_ENDPOINT,
) -> int:
    """Dispatch up to ``limit`` due rows; returns how many were sent to the broker."""
    at = now()
    with services.uow() as uow:
        session = uow.session
        ids = list(
            session.scalars(
                select(WebhookDelivery.id)
                .where(
                    WebhookDelivery.status == DeliveryState.PENDING.value,
                    WebhookDelivery.next_attempt_at <= at,
                    or_(
                        WebhookDelivery.dispatched_until.is_(None),
                        WebhookDelivery.dispatched_until < at,
                    ),
                    or_(
                        WebhookDelivery.sending_until.is_(None),
                        WebhookDelivery.sending_until < at,
                    ),
                    endpoint_has_room(at, per_endpoint),
                )
                .order_by(WebhookDelivery.next_attempt_at)
                .limit(limit)
            )
        )
        if not ids:
            return 0
        session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(ids))
            .values(dispatched_until=at + grace)
            .execution_options(synchronize_session=False)
        )
        broker = services.broker

        def send() -> None:
            for delivery_id in ids:
                contracts.send_deliver_webhook(broker, delivery_id)

        uow.after_commit(send)
        uow.commit()
    return len(ids)


def start(services: Services, stop: threading.Event) -> threading.Thread:
    """Run the relay in a daemon thread until ``stop`` is set."""
    grace = timedelta(seconds=max(60, 6 * services.settings.sweep_interval_s))

    def loop() -> None:
        while not stop.is_set():
            try:
                sent = relay_once(services, grace=grace)
            except Exception:
                log.exception("webhook relay failed; retrying")
                sent = 0
            if sent < BATCH:
                stop.wait(POLL_S)

    thread = threading.Thread(target=loop, name="walletd-webhook-relay", daemon=True)
    thread.start()
    return thread
