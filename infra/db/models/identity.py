"""Identity beyond API keys: passkeys, OAuth providers, tags, invitations, contract interfaces.

Tables of the ``identity`` migration (``0003_identity``). Foreign keys point only at
foundation tables (organizations, users) or at tables of this module. Which private keys carry
a private-key tag is stored on the private key itself (``private_keys.tags``, the wallets
concept's column that ``v1PrivateKey.privateKeyTags`` shows).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Authenticator(Timestamped, Base):
    """A passkey (WebAuthn credential) of a user; ``public_key`` is the base64url COSE key."""

    __tablename__ = "authenticators"
    #: One passkey per credential id in an organization (also the stamp lookup index).
    __table_args__ = (
        Index("uq_authenticators_credential_id_org", "credential_id", "organization_id",
              unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    credential_id: Mapped[str] = mapped_column(String(1400))
    public_key: Mapped[str] = mapped_column(Text)
    algorithm: Mapped[int] = mapped_column(Integer)
    aaguid: Mapped[str] = mapped_column(String(64))
    attestation_type: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(128), default="")
    transports: Mapped[list] = mapped_column(default=list)
    sign_count: Mapped[int] = mapped_column(Integer, default=0)


class OauthProvider(Timestamped, Base):
    """An OIDC identity (issuer, audience, subject) bound to a user."""

    __tablename__ = "oauth_providers"
    #: One user per OIDC identity in an organization.
    __table_args__ = (
        Index("uq_oauth_providers_identity", "organization_id", "issuer", "audience", "subject",
              unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    issuer: Mapped[str] = mapped_column(String(512))
    audience: Mapped[str] = mapped_column(String(512))
    subject: Mapped[str] = mapped_column(String(512), index=True)


class Tag(Timestamped, Base):
    """A user tag or a private-key tag (``TAG_TYPE_USER`` / ``TAG_TYPE_PRIVATE_KEY``)."""

    __tablename__ = "tags"
    __table_args__ = (UniqueConstraint("organization_id", "tag_type", "name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(256))
    tag_type: Mapped[str] = mapped_column(String(32))


class UserTagAssignment(Base):
    """Which users carry which user tag."""

    __tablename__ = "user_tag_assignments"

    tag_id: Mapped[str] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )


class Invitation(Timestamped, Base):
    """An invitation for someone to join the organization as a user."""

    __tablename__ = "invitations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    receiver_user_name: Mapped[str] = mapped_column(String(256))
    receiver_email: Mapped[str] = mapped_column(String(320))
    receiver_user_tags: Mapped[list] = mapped_column(default=list)
    access_type: Mapped[str] = mapped_column(String(32))
    sender_user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(32), default="INVITATION_STATUS_CREATED")


class SmartContractInterface(Timestamped, Base):
    """An Ethereum ABI or Solana IDL the policy engine can decode calls with."""

    __tablename__ = "smart_contract_interfaces"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    address: Mapped[str] = mapped_column(String(128), index=True)
    interface: Mapped[str] = mapped_column(Text)
    interface_type: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(256))
    notes: Mapped[str] = mapped_column(Text, default="")


class DeletedOrganization(Base):
    """A sub-organization removed by ``delete_sub_organization``.

    The organization row stays (its activities, including the deleting one, remain readable)
    but its users and credentials are gone and it is no longer listed.
    """

    __tablename__ = "deleted_organizations"

    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
