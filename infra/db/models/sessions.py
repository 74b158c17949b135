"""One-time codes and the verification tokens a verified code becomes.

Codes are stored only as a keyed hash (HMAC-SHA256 under a key derived from the service
encryption key, ``key_version`` naming its version): a database dump alone cannot be
brute-forced offline. Verification tokens are stored by id (never the JWT itself) to count
their uses: one sign-up and one login each; once its login is spent, the token is redacted
from the result of the ``verify_otp`` that issued it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class OtpCode(Timestamped, Base):
    """One initiated one-time code (``otpId``)."""

    __tablename__ = "otp_codes"
    __table_args__ = (Index("ix_otp_codes_contact", "organization_id", "contact"),
                      Index("ix_otp_codes_contact_created", "contact", "created_at"))

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    #: ``otp`` (init_otp → verify_otp) or ``otp_auth`` (init_otp_auth → otp_auth).
    purpose: Mapped[str] = mapped_column(String(16))
    otp_type: Mapped[str] = mapped_column(String(32))
    contact: Mapped[str] = mapped_column(String(320))
    #: The user an ``otp_auth`` code logs in (``None`` for ``init_otp``: sign-ups too).
    user_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    code_hash: Mapped[str] = mapped_column(String(64))
    key_version: Mapped[int] = mapped_column(Integer)
    alphanumeric: Mapped[bool] = mapped_column(default=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class VerificationToken(Timestamped, Base):
    """A verification token issued by ``verify_otp`` (the JWT's ``id`` claim)."""

    __tablename__ = "verification_tokens"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    otp_id: Mapped[str] = mapped_column(String(36))
    #: The ``verify_otp`` activity whose result carries the token (redacted once it is spent).
    activity_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    verification_type: Mapped[str] = mapped_column(String(32))
    contact: Mapped[str] = mapped_column(String(320))
    public_key: Mapped[str] = mapped_column(String(160), default="")
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: When it served its sign-up, and the request that used it (a re-sent identical
    #: request is the same use, not a second one).
    signup_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    signup_fingerprint: Mapped[str | None] = mapped_column(String(80), nullable=True)
    login_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    login_fingerprint: Mapped[str | None] = mapped_column(String(80), nullable=True)
