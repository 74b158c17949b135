"""Seal events in the audit log: each event of the sealed keyring's history, one leaf, once.

A seal operation (``walletd operator init``, ``rekey``, ``seal-migrate``, ``rotate-root``, the
import of plaintext key files) changes a file, not the database: it may run before the first
migration or while the database is down. So the operation appends its event to the file's
public history in the same atomic replacement as the change (``infra.seal.sealed_file``), and
the consensus worker's audit loop stages a ``key`` leaf for every event the log does not hold
yet, with the event's id in ``audit_seal_events`` in the same transaction: recorded once, even
by two workers at once (the second one's insert conflicts and its transaction rolls back).

A leaf holds the event's public details only: its id, kind, time, the deployment id, the seal
type, the root key version, the share threshold and count, the names of imported files.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.audit.leaves import record_key_event
from infra.db.models.audit import AuditSealEvent, table
from infra.seal import sealed_file
from infra.seal.errors import Sealed
from infra.seal.sealed_file import SealedFile

log = logging.getLogger(__name__)

_INSERT = insert(table(AuditSealEvent))


def record(session: Session, sealed: SealedFile) -> int:
    """Stage a leaf for each event of ``sealed`` not recorded yet; how many were staged."""
    events = {str(event.get("id", "")): event for event in sealed.events}
    events.pop("", None)  # an event without an id (a hand-edited file) cannot be deduplicated
    if not events:
        return 0
    known = set(session.scalars(select(AuditSealEvent.event_id)
                                .where(AuditSealEvent.event_id.in_(events))))
    new = [(event_id, event) for event_id, event in events.items() if event_id not in known]
    for event_id, event in new:
        session.execute(_INSERT, {"event_id": event_id})
        details = {key: value for key, value in event.items() if key != "event"}
        record_key_event(session, str(event.get("event", "SEAL_EVENT")), details)
    return len(new)


class SealEventRecorder:
    """Re-reads the keyring file when it changes and records its new events (audit loop)."""

    def __init__(self, path: str, uow: Callable[[], Any]) -> None:
        self.path = path
        self.uow = uow
        self._seen: tuple[int, int] | None = None

    def __call__(self) -> int:
        stamp = sealed_file.stamp(self.path)
        if stamp == self._seen:
            return 0
        try:
            current = sealed_file.read(self.path)
        except Sealed as err:
            log.warning("seal events: cannot read the keyring file: %s", err)
            return 0
        if current is None:
            self._seen = stamp
            return 0
        try:
            with self.uow() as uow:
                staged = record(uow.session, current)
                uow.commit()
        except IntegrityError:
            return 0  # another worker recorded them first; read again next time
        self._seen = stamp
        if staged:
            log.info("seal events: %d recorded in the audit log", staged)
        return staged
