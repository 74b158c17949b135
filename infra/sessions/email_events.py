"""The email event log: what walletd's own SMTP hop saw, for ``list_email_events``.

walletd is its own first hop: it knows that it handed a message to the relay (``Send``), the
relay's answer when it took it (``Delivery``, with the SMTP reply), a temporary refusal it
retried (``DeliveryDelay``) and a permanent refusal (``Bounce``). It does not see what happens
after the relay (a later bounce, a complaint): an operator who needs those reads their
provider's logs. Events are written by one background writer per process
(:class:`EventWriter`, built by ``infra.bootstrap`` for worker-type roles and held by their
``WorkerServices``; its thread is started by the role's entry point, ``walletd.processes``),
in their own transactions, once the activity that sent the mail has ended (its transaction
holds the embedded database's write lock), so a refused email is logged even when its
activity fails. A process killed before the writer ran loses those events: the log is an
operational record, not a ledger.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from infra.clock import new_id, now
from infra.db.models.email_events import EmailEvent
from infra.db.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

SEND, DELIVERY, DELAY, BOUNCE = "Send", "Delivery", "DeliveryDelay", "Bounce"


@dataclass(frozen=True)
class Event:
    """One event, before it is written."""

    organization_id: str
    message_id: str
    event_type: str
    from_address: str
    to_address: str
    details: dict[str, Any] = field(default_factory=dict)
    at: datetime = field(default_factory=now)


#: Events queued and not yet written, at most (more are dropped, with a warning).
QUEUED = 10_000
#: How often an idle writer looks whether it should stop.
IDLE_S = 0.5


class EventWriter:
    """A queue and the thread that writes it, one per process (``start`` starts the thread).

    Args:
        uow: Makes the unit of work each event is written in (``Services.uow``).
    """

    def __init__(self, uow: Callable[[], UnitOfWork]) -> None:
        self._uow = uow
        self._queue: queue.Queue[Event] = queue.Queue(maxsize=QUEUED)

    def put(self, event: Event) -> None:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            log.warning("email event log is full; dropping a %s event", event.event_type)

    def start(self, stop: threading.Event) -> threading.Thread:
        """Write queued events in a daemon thread until ``stop`` is set (what is queued then
        is written first)."""
        thread = threading.Thread(target=self._run, args=(stop,), name="walletd-email-events", daemon=True)
        thread.start()
        return thread

    def _run(self, stop: threading.Event) -> None:
        while not (stop.is_set() and self._queue.empty()):
            try:
                event = self._queue.get(timeout=IDLE_S)
            except queue.Empty:
                continue
            try:
                with self._uow() as uow:
                    uow.session.add(EmailEvent(
                        id=new_id(), organization_id=event.organization_id,
                        message_id=event.message_id, event_type=event.event_type,
                        from_address=event.from_address, to_address=event.to_address,
                        details=event.details, at=event.at))
                    uow.commit()
            except Exception:
                log.exception("could not record a %s email event", event.event_type)


def render(row: EmailEvent) -> dict[str, Any]:
    """``v1EmailEvent``."""
    at = row.at if row.at.tzinfo is not None else row.at.replace(tzinfo=now().tzinfo)
    millis = str(int(at.timestamp() * 1000))
    return {"id": row.id, "organizationId": row.organization_id, "messageId": row.message_id,
            "eventType": row.event_type, "fromAddress": row.from_address,
            "toAddress": row.to_address, "timestamp": millis, "createdAt": millis,
            "details": dict(row.details or {})}
