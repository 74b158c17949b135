"""Secrets stored beside keys (``import_secrets`` / ``export_secrets`` / ``list_secrets``).

The value is sealed like a wallet's mnemonic: ``wrapped_key`` is the row's data key wrapped by
a master-key version, ``ciphertext`` the value under that data key, bound to ``secret:<id>``.
``name`` and ``static_properties`` are metadata: readable by ``list_secrets`` and by policies.
"""

from __future__ import annotations

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Secret(Timestamped, Base):
    """One imported secret of an organization, sealed at rest."""

    __tablename__ = "secrets"
    __table_args__ = (
        UniqueConstraint("organization_id", "name", name="uq_secrets_organization_name"),
        Index("ix_secrets_org_created", "organization_id", "created_at"),
    )
    SEALED_KIND = "secret"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    #: Optional; unique within the organization when given (NULLs never collide).
    name: Mapped[str | None] = mapped_column(String(256), nullable=True)
    #: ``[{"key": ..., "value": ...}]`` in the order given at import.
    static_properties: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)
    wrapped_key: Mapped[str] = mapped_column(Text)
    ciphertext: Mapped[str] = mapped_column(Text)
