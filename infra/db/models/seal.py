"""What each worker process last said about its seal (the console's "seal state").

The ingress holds no seal and no key; the processes that do report here, every few seconds
and at each change (``infra.seal.reports``), and ``get_seal_status`` reads the fresh rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from sqlalchemy import Boolean, DateTime, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import now
from infra.db.base import Base

#: How often a process reports (and at once when it seals or unseals).
REPORT_INTERVAL_S: Final = 5.0
#: Reports older than this are a process that is gone (or cannot reach the database).
FRESH_S: Final = 3 * REPORT_INTERVAL_S


class SealReport(Base):
    """One process's seal, as it last reported it (no secret, no host name)."""

    __tablename__ = "seal_reports"

    #: A random id of the process (chosen at start).
    process_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    #: What the process runs, e.g. ``worker[signing,accounts]`` or ``up``.
    role: Mapped[str] = mapped_column(String(128))
    sealed: Mapped[bool] = mapped_column(Boolean)
    seal_type: Mapped[str] = mapped_column(String(16))
    root_version: Mapped[int] = mapped_column(Integer)
    threshold: Mapped[int] = mapped_column(Integer)
    progress: Mapped[int] = mapped_column(Integer)
    reported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
