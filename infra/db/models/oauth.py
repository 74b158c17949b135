"""OAuth 2.0 client credentials (``create_oauth2_credential`` and friends).

Tables of the ``oauth`` migration branch (``0011_oauth``). Foreign keys point only at the
foundation's organizations.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class Oauth2Credential(Timestamped, Base):
    """An OAuth 2.0 provider's client id and client secret registered by an organization.

    ``encrypted_client_secret`` is the envelope the client sent (encrypted to the service's
    encryption key, shown back as ``v1Oauth2Credential.encryptedClientSecret``); the secret
    itself is sealed under the master key (``wrapped_key`` / ``ciphertext``, context
    ``oauth2_credential:<id>``) and only opened by workers exchanging authorization codes.
    """

    __tablename__ = "oauth2_credentials"
    #: Context of the sealed secret (``infra.wallets.custody.row_context``).
    SEALED_KIND = "oauth2_credential"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(64))
    client_id: Mapped[str] = mapped_column(String(512), index=True)
    encrypted_client_secret: Mapped[str] = mapped_column(Text)
    wrapped_key: Mapped[str] = mapped_column(Text)
    ciphertext: Mapped[str] = mapped_column(Text)

