"""Wallets, wallet accounts, standalone private keys and key-custody rows.

Secret material is never stored in plaintext: every secret column is an envelope pair
(``wrapped_key`` = the row's data key wrapped by a master-key version, ``ciphertext`` = the
secret under that data key; see ``infra.crypto.envelope``).
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Wallet(Timestamped, Base):
    """An HD wallet: its BIP-39 mnemonic (and passphrase) sealed at rest."""

    __tablename__ = "wallets"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(256))
    wrapped_key: Mapped[str] = mapped_column(Text)
    ciphertext: Mapped[str] = mapped_column(Text)
    imported: Mapped[bool] = mapped_column(Boolean, default=False)
    exported: Mapped[bool] = mapped_column(Boolean, default=False)
    version: Mapped[int] = mapped_column(Integer, default=1)


class WalletAccount(Timestamped, Base):
    """One derived account (curve + path + address format) of a wallet."""

    __tablename__ = "wallet_accounts"
    __table_args__ = (
        UniqueConstraint("wallet_id", "curve", "path", "address_format",
                         name="uq_wallet_accounts_derivation"),
        Index("ix_wallet_accounts_org_address", "organization_id", "address"),
        Index("ix_wallet_accounts_wallet_created", "wallet_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    wallet_id: Mapped[str] = mapped_column(ForeignKey("wallets.id", ondelete="CASCADE"))
    curve: Mapped[str] = mapped_column(String(32))
    path_format: Mapped[str] = mapped_column(String(32))
    path: Mapped[str] = mapped_column(String(256))
    address_format: Mapped[str] = mapped_column(String(64))
    address: Mapped[str] = mapped_column(String(256))
    public_key: Mapped[str] = mapped_column(String(160))
    name: Mapped[str | None] = mapped_column(String(256), nullable=True)


class PrivateKey(Timestamped, Base):
    """A standalone private key (``create_private_keys``), sealed at rest."""

    __tablename__ = "private_keys"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(256))
    curve: Mapped[str] = mapped_column(String(32))
    public_key: Mapped[str] = mapped_column(String(160))
    addresses: Mapped[list] = mapped_column(JSON, default=list)
    tags: Mapped[list] = mapped_column(JSON, default=list)
    wrapped_key: Mapped[str] = mapped_column(Text)
    ciphertext: Mapped[str] = mapped_column(Text)
    imported: Mapped[bool] = mapped_column(Boolean, default=False)
    exported: Mapped[bool] = mapped_column(Boolean, default=False)
    version: Mapped[int] = mapped_column(Integer, default=1)


class PrivateKeyAddress(Base):
    """Address index of private keys, so ``signWith`` by address is one indexed look-up."""

    __tablename__ = "private_key_addresses"
    __table_args__ = (Index("ix_private_key_addresses_org_address", "organization_id", "address"),)

    private_key_id: Mapped[str] = mapped_column(
        ForeignKey("private_keys.id", ondelete="CASCADE"), primary_key=True
    )
    address_format: Mapped[str] = mapped_column(String(64), primary_key=True)
    organization_id: Mapped[str] = mapped_column(String(36))
    address: Mapped[str] = mapped_column(String(256))


class ImportTarget(Timestamped, Base):
    """The HPKE target key of an ``init_import_wallet`` for one user (private half sealed)."""

    __tablename__ = "import_targets"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(32), default="wallet")
    public_key: Mapped[str] = mapped_column(String(160))
    wrapped_key: Mapped[str] = mapped_column(Text)
    ciphertext: Mapped[str] = mapped_column(Text)


class ServiceKey(Timestamped, Base):
    """A key of the service itself (the bundle signer), private half sealed."""

    __tablename__ = "service_keys"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    public_key: Mapped[str] = mapped_column(String(160))
    wrapped_key: Mapped[str] = mapped_column(Text)
    ciphertext: Mapped[str] = mapped_column(Text)
