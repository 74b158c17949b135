"""Transactions walletd sends (``eth_send_transaction``, ``sol_send_transaction``) and nonces.

A ``send_transactions`` row is written, signed, in the same transaction as the activity that
asked for it; the tracker (``infra.broadcast.tracker``) broadcasts it after the commit and
follows it to inclusion. ``raw_transaction`` is the signed transaction (public once sent);
``hashes`` lists every hash broadcast for it (fee-bump replacements included), so whichever
the chain includes is found. ``chain_nonces`` is the nonce manager: the next nonce per
address and chain, taken under a row lock.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class SendTransaction(Timestamped, Base):
    """One transaction walletd signed and is broadcasting."""

    __tablename__ = "send_transactions"
    __table_args__ = (
        Index("ix_send_transactions_due", "status", "next_check_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    activity_id: Mapped[str] = mapped_column(String(36), index=True)
    caip2: Mapped[str] = mapped_column(String(128))
    chain: Mapped[str] = mapped_column(String(16))  # "eth" | "solana"
    from_address: Mapped[str] = mapped_column(String(128))
    nonce: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    #: INITIALIZED | BROADCASTING | INCLUDED | FAILED
    status: Mapped[str] = mapped_column(String(16))
    #: The fields signed (re-signed with higher fees when stuck); never secret.
    unsigned: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    raw_transaction: Mapped[str] = mapped_column(Text)
    tx_hash: Mapped[str] = mapped_column(String(128))
    hashes: Mapped[list[str]] = mapped_column(JSON, default=list)
    block_number: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    replacements: Mapped[int] = mapped_column(Integer, default=0)
    #: The fees of the first signature (``maxFeePerGas``, ``maxPriorityFeePerGas`` as decimal
    #: strings): replacements stay under a multiple of them (``infra.broadcast.bounds``).
    first_fees: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    broadcast_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    next_check_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: A tracker holds the row until then (crash: another picks it up after).
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)


class ChainNonce(Base):
    """The next nonce walletd hands out for one address on one chain."""

    __tablename__ = "chain_nonces"

    caip2: Mapped[str] = mapped_column(String(128), primary_key=True)
    address: Mapped[str] = mapped_column(String(128), primary_key=True)
    next_nonce: Mapped[int] = mapped_column(BigInteger)
