"""What walletd's own SMTP hop saw for each email it sent (``list_email_events``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base


class EmailEvent(Base):
    """One event of one email: ``Send``, ``Delivery`` (the relay took it, with its reply),
    ``DeliveryDelay`` (a temporary refusal, retried) or ``Bounce`` (a permanent refusal)."""

    __tablename__ = "email_events"
    __table_args__ = (
        Index("ix_email_events_org_to_at", "organization_id", "to_address", "at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(String(256))
    event_type: Mapped[str] = mapped_column(String(32))
    from_address: Mapped[str] = mapped_column(String(512))
    to_address: Mapped[str] = mapped_column(String(320))
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
