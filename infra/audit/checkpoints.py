"""Signed checkpoints: the tree's size and root in a C2SP signed note, stored per size.

:func:`issue` appends what is staged and signs the tree when it grew (a worker loop does it
every ``WALLETD_AUDIT_CHECKPOINT_INTERVAL_S``, ``walletd audit checkpoint`` on demand). The
stored notes are what clients, witnesses and ``walletd audit verify`` read.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from infra.audit import note, sequencer
from infra.audit.log_key import LogKey, LogKeys
from infra.db.models.audit import AuditCheckpoint, table
from infra.errors import NotFound


@dataclass(frozen=True)
class Stored:
    size: int
    root: bytes
    note: str

    def to_wire(self) -> dict[str, Any]:
        return {"treeSize": str(self.size), "rootHash": base64.b64encode(self.root).decode(),
                "note": self.note}


def sign_current(session: Session, key: LogKey) -> Stored:
    """Sign the tree as it is (the caller holds the size lock) unless already signed."""
    size = sequencer.tree_size(session)
    existing = session.get(AuditCheckpoint, size)
    if existing is not None:
        return Stored(size, bytes(existing.root), existing.note)
    root = sequencer.root_at(session, size)
    signed = key.sign_note(note.Checkpoint(key.origin, size, root).text())
    session.execute(insert(table(AuditCheckpoint)).values(size=size, root=root, note=signed))
    return Stored(size, root, signed)


def issue(services: Any, keys: LogKeys) -> Stored:
    """Append every staged leaf (in batches) and sign the result; commits."""
    with services.session_factory() as session:
        key = keys.get(session)
    while True:
        with services.uow() as uow:
            added = sequencer.integrate(uow.session)
            if added < sequencer.BATCH:
                stored = sign_current(uow.session, key)
                uow.commit()
                return stored
            uow.commit()


def latest(session: Session) -> Stored:
    """The newest stored checkpoint.

    Raises:
        NotFound: none has been issued yet.
    """
    row = session.execute(select(AuditCheckpoint).order_by(
        AuditCheckpoint.size.desc()).limit(1)).scalar_one_or_none()
    if row is None:
        raise NotFound("no audit checkpoint has been issued yet; retry in a few seconds")
    return Stored(int(row.size), bytes(row.root), row.note)


def at_size(session: Session, size: int) -> Stored:
    """The stored checkpoint of ``size``.

    Raises:
        NotFound: no checkpoint of that size.
    """
    row = session.get(AuditCheckpoint, size)
    if row is None:
        raise NotFound(f"no audit checkpoint of tree size {size}")
    return Stored(int(row.size), bytes(row.root), row.note)
