"""Webhook endpoints, the delivery outbox, delivery attempts and published signing keys.

``webhook_deliveries`` is the outbox: rows are inserted by the activity lifecycle listener in
the same transaction as the activity change (``infra.webhooks.outbox``). One row per event and
endpoint (unique), so a retried transaction cannot invent a second delivery. The notifier
reads rows, never messages, as the truth: a message only says "look at delivery X".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped

#: ``webhook_endpoints.source``: created through the endpoint API.
SOURCE_API = "api"
#: ``webhook_endpoints.source``: mirrors the legacy ``FEATURE_NAME_WEBHOOK`` feature.
SOURCE_FEATURE = "feature"


class WebhookEndpoint(Timestamped, Base):
    """A URL an organization receives events at, with its subscriptions and health."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(String(256))
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    #: ``[{"eventType", "filtersJson"?, "isActive"?}]`` as on the wire.
    subscriptions: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    source: Mapped[str] = mapped_column(String(16), default=SOURCE_API)
    #: First failure with no success since; ``None`` while healthy.
    failing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disabled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)


class WebhookDelivery(Timestamped, Base):
    """One event owed to one endpoint (the outbox row) and its retry state."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("event_id", "endpoint_id", name="uq_webhook_deliveries_event_endpoint"),
        Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_org_created", "organization_id", "created_at"),
        #: Counting an endpoint's deliveries in flight (the notifier's per-endpoint cap).
        Index("ix_webhook_deliveries_endpoint_sending", "endpoint_id", "sending_until"),
        #: An endpoint's pending deliveries by due time (a notifier run leases the next one).
        Index(
            "ix_webhook_deliveries_endpoint_due",
            "endpoint_id",
            "next_attempt_at",
            "id",
            postgresql_where=text("status = 'PENDING'"),
            sqlite_where=text("status = 'PENDING'"),
        ),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    event_id: Mapped[str] = mapped_column(String(64))
    event_type: Mapped[str] = mapped_column(String(64))
    endpoint_id: Mapped[str] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), index=True
    )
    #: The endpoint's organization (receives the event).
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    #: The organization the event is about (``X-Turnkey-Organization-Id``).
    subject_organization_id: Mapped[str] = mapped_column(String(36))
    activity_id: Mapped[str | None] = mapped_column(String(36), nullable=True, index=True)
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    #: Attempts counted by the retry schedule (reset by a replay; ``attempts`` is not).
    schedule_attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: A deliver message is believed queued until then; the relay leaves the row alone.
    dispatched_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: An actor is sending until then (lease); nobody else sends meanwhile.
    sending_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    sending_token: Mapped[str | None] = mapped_column(String(36), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)


class WebhookAttempt(Base):
    """One HTTP attempt of a delivery, as it happened."""

    __tablename__ = "webhook_attempts"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    delivery_id: Mapped[str] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    latency_ms: Mapped[float] = mapped_column(Float)
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_excerpt: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    address: Mapped[str | None] = mapped_column(String(64), nullable=True)
    outcome: Mapped[str] = mapped_column(String(16))


class WebhookSigningPublicKey(Base):
    """A public webhook signing key, published by the notifier for the JWKS endpoint.

    Private seeds never enter the database; the ingress serves the JWKS from these rows.
    """

    __tablename__ = "webhook_signing_keys"

    key_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    public_key: Mapped[str] = mapped_column(String(64))
    activates_at_ms: Mapped[int] = mapped_column(BigInteger)
    retires_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
