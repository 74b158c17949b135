"""Organizations, users, API keys and organization features."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Organization(Timestamped, Base):
    """An organization; sub-organizations have a ``parent_id``."""

    __tablename__ = "organizations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(256))
    parent_id: Mapped[str | None] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True, nullable=True
    )
    root_quorum_threshold: Mapped[int] = mapped_column(Integer, default=1)
    version: Mapped[int] = mapped_column(Integer, default=1)


class User(Timestamped, Base):
    """A user of one organization. Root users form the root quorum."""

    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(256))
    email: Mapped[str | None] = mapped_column(String(320), nullable=True, index=True)
    phone_number: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    is_root: Mapped[bool] = mapped_column(Boolean, default=False)
    #: When the email / phone number was proven (a spent verification token for exactly
    #: that value, or set by the operator); ``None``: stored but never used to find the user
    #: (``infra.identity.verified``).
    email_verified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True),
                                                               nullable=True)
    phone_verified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True),
                                                               nullable=True)
    #: Moves with every change to what ``v1User`` shows (database triggers,
    #: ``infra.db.triggers``); rendered views are remembered by it.
    view_version: Mapped[int] = mapped_column(BigInteger, default=1, server_default="1")


class ApiKey(Timestamped, Base):
    """An API-key credential (P-256, secp256k1 or Ed25519 public key, hex)."""

    __tablename__ = "api_keys"
    #: One key per public key in an organization (also the stamp lookup index).
    __table_args__ = (
        Index("uq_api_keys_public_key_org", "public_key", "organization_id", unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    public_key: Mapped[str] = mapped_column(String(160))
    curve: Mapped[str] = mapped_column(String(64))
    credential_type: Mapped[str] = mapped_column(String(64))
    expiration_seconds: Mapped[str | None] = mapped_column(String(32), nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: When the key became a login identity (found by a login addressed to a parent and by
    #: account lookups): bound by the operator, or the only way into a signed-up
    #: sub-organization. ``None``: it stamps in its own organization only.
    login_verified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True),
                                                               nullable=True)
    #: The session profile a login credential was issued under (migration 0025_access_controls).
    session_profile_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    #: The credential this one descends from (migration 0030_credential_lineage): set when an
    #: API-key-type credential (a session or API key, ``X-Stamp``) stamped the activity that
    #: issued this one (``stamp_login``, ``create_read_write_session``, ``create_api_keys``,
    #: ...): the ``lineage_root_id`` of that credential, or its own id when it has none.
    #: ``None``: this credential is its own root (issued by a passkey, a one-time proof, the
    #: auth proxy or the operator). MFA never lets a credential approve an activity proposed
    #: by one of the same lineage (``infra.pipeline.mfa``).
    lineage_root_id: Mapped[str | None] = mapped_column(String(36), nullable=True)


class OrganizationFeature(Timestamped, Base):
    """A ``FEATURE_NAME_*`` set on an organization, with its value."""

    __tablename__ = "organization_features"

    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    value: Mapped[str] = mapped_column(Text, default="")
