"""SQLite's stand-in for the announcements PostgreSQL sends with NOTIFY (``infra.db.announced``)."""

from __future__ import annotations

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from infra.db.base import Base


class RowsChanged(Base):
    """How many times each announced table has been written, counted by SQLite triggers
    (``infra.db.triggers.create_change_counters``); empty on PostgreSQL, whose triggers
    announce changes with ``NOTIFY`` instead."""

    __tablename__ = "rows_changed"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger, default=0)
