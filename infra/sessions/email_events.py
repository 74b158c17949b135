"""The email event log: what walletd's own SMTP hop saw, for ``list_email_events``.

walletd is its own first hop: it knows that it handed a message to the relay (``Send``), the
relay's answer when it took it (``Delivery``, with the SMTP reply), a temporary refusal it
retried (``DeliveryDelay``) and a permanent refusal (``Bounce``). It does not see what happens
after the relay (a later bounce, a complaint): an operator who needs those reads their
provider's logs. Events are written by one background writer per process, in their own
transactions, once the activity that sent the mail has ended (its transaction holds the
embedded database's write lock), so a refused email is logged even when its activity fails.
A process killed before the writer ran loses those events: the log is an operational record,
not a ledger.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from infra.clock import new_id, now
from infra.db.models.email_events import EmailEvent
from infra.services import Services

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


class EventWriter:
    """A queue and the daemon thread that writes it (one per process and database)."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self._queue: queue.Queue[Event] = queue.Queue(maxsize=10_000)
        self._thread = threading.Thread(target=self._run, name="walletd-email-events",
                                        daemon=True)
        self._thread.start()

    def put(self, event: Event) -> None:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            log.warning("email event log is full; dropping a %s event", event.event_type)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            try:
                with self._services.uow() as uow:
                    uow.session.add(EmailEvent(
                        id=new_id(), organization_id=event.organization_id,
                        message_id=event.message_id, event_type=event.event_type,
                        from_address=event.from_address, to_address=event.to_address,
                        details=event.details, at=event.at))
                    uow.commit()
            except Exception:
                log.exception("could not record a %s email event", event.event_type)


_writers: dict[int, EventWriter] = {}
_lock = threading.Lock()


def writer(services: Services) -> EventWriter:
    """The writer of ``services``' database in this process."""
    key = id(services.engine)
    with _lock:
        if key not in _writers:
            _writers[key] = EventWriter(services)
        return _writers[key]


def render(row: EmailEvent) -> dict[str, Any]:
    """``v1EmailEvent``."""
    at = row.at if row.at.tzinfo is not None else row.at.replace(tzinfo=now().tzinfo)
    millis = str(int(at.timestamp() * 1000))
    return {"id": row.id, "organizationId": row.organization_id, "messageId": row.message_id,
            "eventType": row.event_type, "fromAddress": row.from_address,
            "toAddress": row.to_address, "timestamp": millis, "createdAt": millis,
            "details": dict(row.details or {})}
