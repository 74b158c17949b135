"""Access controls: IP allow-lists, session profiles, MFA policies and MFA progress.

``ip_allowlists`` holds one row per organization-level list (``public_key`` is ``""``) and
per API-key-level list (``public_key`` set); its ``rules`` are the normalised wire rules
(``{cidr, label, createdAt}``) in the order they were set. Session profiles are immutable
rows of the organization that created them. ``mfa_policies`` belong to one user;
``mfa_progress`` records each satisfied step of an activity waiting for a user's MFA.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class IpAllowlist(Timestamped, Base):
    """One allow-list: the organization's (``public_key == ""``) or one API key's."""

    __tablename__ = "ip_allowlists"
    __table_args__ = (
        Index("uq_ip_allowlists_organization_key", "organization_id", "public_key", unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"))
    #: The API key's public key (as stamped), ``""`` for the organization-level list.
    public_key: Mapped[str] = mapped_column(String(160), default="")
    #: Organization-level lists only (``None`` for key-level lists).
    enabled: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    on_evaluation_error: Mapped[str] = mapped_column(String(8), default="DENY")
    rules: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)


class SessionProfile(Timestamped, Base):
    """A session profile (immutable once created)."""

    __tablename__ = "session_profiles"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    scope: Mapped[str] = mapped_column(Text)
    expiration_seconds: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    notes: Mapped[str] = mapped_column(Text, default="")


class MfaPolicy(Timestamped, Base):
    """One MFA policy of one user; ``required_methods`` is the wire list of steps."""

    __tablename__ = "mfa_policies"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    condition: Mapped[str] = mapped_column(Text)
    required_methods: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    order: Mapped[int] = mapped_column(Integer, default=0)
    notes: Mapped[str] = mapped_column(Text, default="")


class MfaProgress(Timestamped, Base):
    """A step of a user's MFA policy satisfied for one activity (one row per step)."""

    __tablename__ = "mfa_progress"
    __table_args__ = (
        Index("uq_mfa_progress_step", "activity_id", "user_id", "step", unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    activity_id: Mapped[str] = mapped_column(
        ForeignKey("activities.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(String(36))
    mfa_policy_id: Mapped[str] = mapped_column(String(36))
    step: Mapped[int] = mapped_column(Integer)
    #: The ``AUTHENTICATION_TYPE_*`` that satisfied it, and the credential's id.
    method_type: Mapped[str] = mapped_column(String(64))
    method_id: Mapped[str] = mapped_column(String(160), default="")
