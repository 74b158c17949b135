"""The nonce manager: one next nonce per (chain, address), handed out under a row lock.

The activity that sends a transaction takes its nonce in its own transaction, so the nonce
is used if and only if the transaction is stored: a rolled-back activity gives it back, and
concurrent sends from one address queue on the row (PostgreSQL ``FOR UPDATE``; SQLite
serialises writers anyway) and get consecutive nonces. The node's pending count is the floor:
transactions sent from elsewhere move it up, never down.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from infra.db.models.broadcast import ChainNonce


def _ensure_row(session: Session, caip2: str, address: str, floor: int) -> None:
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    session.execute(insert(ChainNonce).values(caip2=caip2, address=address, next_nonce=floor)
                    .on_conflict_do_nothing())


def _locked(session: Session, caip2: str, address: str) -> ChainNonce:
    row = session.scalars(select(ChainNonce).where(
        ChainNonce.caip2 == caip2, ChainNonce.address == address).with_for_update()
        .execution_options(populate_existing=True)).one()
    return row


def reserve(session: Session, caip2: str, address: str, node_pending: int) -> int:
    """The next nonce for ``address`` on ``caip2`` (at least ``node_pending``), taken."""
    address = address.lower()
    _ensure_row(session, caip2, address, node_pending)
    row = _locked(session, caip2, address)
    nonce = max(row.next_nonce, node_pending)
    row.next_nonce = nonce + 1
    session.flush()
    return nonce


def note_used(session: Session, caip2: str, address: str, nonce: int) -> None:
    """A caller chose ``nonce`` itself: hand out only nonces after it from now on."""
    address = address.lower()
    _ensure_row(session, caip2, address, nonce + 1)
    row = _locked(session, caip2, address)
    row.next_nonce = max(row.next_nonce, nonce + 1)
    session.flush()


def peek(session: Session, caip2: str, address: str) -> int | None:
    """The next nonce the manager would hand out (``None``: it has handed out none)."""
    row = session.get(ChainNonce, (caip2, address.lower()))
    return None if row is None else row.next_nonce
