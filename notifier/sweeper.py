"""The outbox relay: hands due delivery rows to the broker.

Rows are written by the activity's own transaction, which has no broker at hand in the
ingress, so a loop in the notifier process looks for ``PENDING`` rows that are due, not
being sent, and not already dispatched, marks them dispatched (``dispatched_until``) and
sends ``deliver_webhook(id)`` after the commit. It does not poll: on PostgreSQL a trigger
announces each row written without being dispatched (``walletd_deliveries_due``) and the
loop wakes on it; otherwise, and for what only time makes due (an expired lease, a
dispatch not acted on), it looks once every ``IDLE_S``. The same query recovers anything a crash or a lost
broker message left behind: a dispatch that was not acted on within the grace period, or a
sending lease that expired because the notifier died mid-request. Duplicated messages are
harmless: the actor acts only on a due, unleased ``PENDING`` row. Rows whose endpoint already
has its cap of deliveries in flight (``notifier.dispatch.in_flight_cap``) wait here until it
has room, and an endpoint is handed only as many rows as it has room for, rather than rows
being sent only to bounce off the cap.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

from infra.clock import now
from infra.messaging import queues
from infra.services import Services
from notifier.dispatch import MAX_IN_FLIGHT_PER_ENDPOINT, dispatch_due, in_flight_cap, sender

log = logging.getLogger(__name__)

#: Longest sleep while idle; announced rows wake it at once, and after finding work it
#: looks again at once.
IDLE_S = 1.0
BATCH = 200
CHANNEL = "walletd_deliveries_due"


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
        ids = dispatch_due(uow.session, at=at, grace=grace, per_endpoint=per_endpoint, limit=limit)
        if not ids:
            return 0
        uow.after_commit(sender(services.broker, ids))
        uow.commit()
    return len(ids)


def _idle(due: threading.Event, stop: threading.Event) -> None:
    """Sleep until rows are announced, ``stop`` is set, or ``IDLE_S`` passed."""
    deadline = time.monotonic() + IDLE_S
    while not stop.is_set() and time.monotonic() < deadline:
        if due.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
            return


def start(services: Services, stop: threading.Event, *, per_endpoint: int | None = None) -> threading.Thread:
    """Run the relay in a daemon thread until ``stop`` is set.

    ``per_endpoint`` is the in-flight cap per endpoint; by default the notifier's own,
    from the notifications pool size.
    """
    grace = timedelta(seconds=max(60, 6 * services.settings.sweep_interval_s))
    if per_endpoint is None:
        per_endpoint = in_flight_cap(services.settings.threads_for(queues.NOTIFICATIONS))

    due = threading.Event()
    if services.listener is not None:
        services.listener.subscribe(CHANNEL, lambda _payload: due.set(), due.set)

    def loop() -> None:
        while not stop.is_set():
            due.clear()
            try:
                sent = relay_once(services, grace=grace, per_endpoint=per_endpoint)
            except Exception:
                log.exception("webhook relay failed; retrying")
                sent = 0
            if sent < BATCH:
                _idle(due, stop)

    thread = threading.Thread(target=loop, name="walletd-webhook-relay", daemon=True)
    thread.start()
    return thread
