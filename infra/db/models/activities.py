"""Activities and the votes cast on them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Activity(Timestamped, Base):
    """One signed request to change state, and what became of it.

    ``body`` is the raw request body exactly as stamped; ``fingerprint`` is
    ``sha256:<hex>`` of it and unique per organization (idempotent submission).
    """

    __tablename__ = "activities"
    __table_args__ = (
        UniqueConstraint("organization_id", "fingerprint", name="uq_activities_org_fingerprint"),
        Index("ix_activities_org_created", "organization_id", "created_at"),
        Index("ix_activities_status_updated", "status", "updated_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    type: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(80))
    body: Mapped[str] = mapped_column(Text)
    timestamp_ms: Mapped[str] = mapped_column(String(32))
    intent: Mapped[dict[str, Any]] = mapped_column(JSON)
    result: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    failure: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    user_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)


class Vote(Timestamped, Base):
    """An approval or rejection of an activity, with the stamp that proved it."""

    __tablename__ = "votes"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    activity_id: Mapped[str] = mapped_column(
        ForeignKey("activities.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(String(36))
    selection: Mapped[str] = mapped_column(String(40))
    message: Mapped[str] = mapped_column(Text)
    public_key: Mapped[str] = mapped_column(String(160))
    signature: Mapped[str] = mapped_column(Text)
    scheme: Mapped[str] = mapped_column(String(64))
