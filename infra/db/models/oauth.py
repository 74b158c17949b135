"""OAuth 2.0 client credentials and the uses of OIDC tokens.

Tables of the ``oauth`` migration (``0011_oauth``). Foreign keys point only at the
foundation's organizations.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String, Text
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



class OidcTokenUse(Base):
    """One use of an OIDC ID token: a token serves one sign-up and one login, never two of one.

    Only the token's SHA-256 is kept (the token is a bearer credential until it expires), with
    the fingerprint of the activity that spent it (the same request re-sent is the same use).
    Rows whose ``expires_at`` passed can be purged: an expired token is refused anyway.
    """

    __tablename__ = "oidc_token_uses"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    usage: Mapped[str] = mapped_column(String(16), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(80))
    used_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
