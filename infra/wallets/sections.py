"""Wallets in shared views: the organization's ``wallets``/``privateKeys`` and the signer key."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.wallets import PrivateKey, Wallet
from infra.errors import Unavailable
from infra.wallets.custody import signer_public_key
from infra.wallets.views import render_private_key, render_wallet


def organization_section(session: Session, organization_id: str) -> dict[str, Any]:
    """``wallets`` and ``privateKeys`` of ``v1OrganizationData``."""
    wallets = session.scalars(select(Wallet).where(Wallet.organization_id == organization_id)
                              .order_by(Wallet.created_at)).all()
    keys = session.scalars(select(PrivateKey).where(PrivateKey.organization_id == organization_id)
                           .order_by(PrivateKey.created_at)).all()
    return {"wallets": [render_wallet(w) for w in wallets],
            "privateKeys": [render_private_key(k) for k in keys]}


def signer_section(session: Session) -> dict[str, Any]:
    """``signerPublicKey``: uncompressed P-256 hex of the bundle signer.

    Raises:
        Unavailable: the signer does not exist yet (no worker has started on this database);
            publishing an empty document would let clients cache the absence.
    """
    public = signer_public_key(session)
    if not public:
        raise Unavailable(
            "the service signer key does not exist yet; it is created when the first worker "
            "starts (walletd worker or walletd up): retry shortly"
        )
    return {"signerPublicKey": public}
