"""Auth proxy configurations: one per organization.

``settings`` holds every field of ``v1UpdateAuthProxyConfigIntent`` as on the wire
(camelCase), so the query answers what was set. The proxy user's P-256 API key is kept
as an HPKE ciphertext sealed to the auth proxy's own key (``infra.authproxy.keys``): only
the proxy process can open it, and it does so for the one request that signs with it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from infra.clock import new_id
from infra.db.base import Base, Timestamped


class AuthProxyConfig(Timestamped, Base):
    """An organization's auth proxy: on/off, its user and key, and its settings."""

    __tablename__ = "auth_proxy_configs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), unique=True
    )
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    user_id: Mapped[str] = mapped_column(String(36))
    #: Compressed P-256 public key of the proxy user's API key (hex).
    api_public_key: Mapped[str] = mapped_column(String(66))
    #: The private half, HPKE-sealed to the proxy key (``infra.authproxy.keys.seal_api_key``).
    api_private_key_sealed: Mapped[str] = mapped_column(Text)
    #: Uncompressed hex of the proxy key the private half is sealed to.
    sealed_to: Mapped[str] = mapped_column(String(130))
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    #: Bumped by every change, so caches can tell a stale copy.
    version: Mapped[int] = mapped_column(Integer, default=1)
