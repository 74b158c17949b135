"""The verifiable activity log's tables (issue 22; ``infra.audit``).

No foreign keys to the rows the leaves describe: a deleted activity must leave its leaves
behind for ``walletd audit verify`` to find.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import BigInteger, DateTime, Index, Integer, LargeBinary, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import now
from infra.db.base import Base

#: BIGINT on PostgreSQL, INTEGER (the rowid alias, autoincrementing) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class AuditStaged(Base):
    """A leaf written by the transaction of the change it records, not yet in the tree.

    ``entry`` is the leaf's canonical JSON without ``index`` and ``prev``, which the sequencer
    adds when it appends the leaf (``infra.audit.sequencer``).
    """

    __tablename__ = "audit_staged"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    organization_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    activity_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    entry: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AuditLeaf(Base):
    """Leaf ``idx`` of the log: its canonical JSON (``data``) and RFC 6962 leaf hash."""

    __tablename__ = "audit_leaves"
    __table_args__ = (Index("ix_audit_leaves_activity", "activity_id", "idx"),
                      Index("ix_audit_leaves_organization", "organization_id", "idx"))

    idx: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    organization_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    activity_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    data: Mapped[str] = mapped_column(Text)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AuditNode(Base):
    """A perfect subtree's hash: leaves ``[idx << level, (idx + 1) << level)``."""

    __tablename__ = "audit_nodes"

    level: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    idx: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32))


class AuditState(Base):
    """One row (``id = 1``): the tree's size. The sequencer locks it while appending."""

    __tablename__ = "audit_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    size: Mapped[int] = mapped_column(BigId, default=0)


class AuditCheckpoint(Base):
    """A signed checkpoint (C2SP signed note) of the tree at ``size``."""

    __tablename__ = "audit_checkpoints"

    size: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    root: Mapped[bytes] = mapped_column(LargeBinary(32))
    note: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AuditAppProof(Base):
    """A Turnkey-shaped app proof (``v1AppProof``) of an activity."""

    __tablename__ = "audit_app_proofs"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    organization_id: Mapped[str] = mapped_column(String(36))
    activity_id: Mapped[str] = mapped_column(String(36), index=True)
    proof: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AuditBoot(Base):
    """A walletd boot record (the per-boot P-256 key of one worker process), log-signed."""

    __tablename__ = "audit_boots"

    public_key: Mapped[str] = mapped_column(String(264), primary_key=True)
    record: Mapped[str] = mapped_column(Text)
    signature: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AuditSealEvent(Base):
    """A seal event (``keyring.sealed``'s ``events``) the log holds a leaf of: each once."""

    __tablename__ = "audit_seal_events"

    event_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


def table(model: type[Base]) -> Table:
    """A model's Core table (for Core statements off the ORM's unit of work)."""
    return cast(Table, model.__table__)
