"""First start: the root organization, its root user and a P-256 API key.

``ensure_root`` is idempotent: with any organization present it does nothing. The key
file ``<data dir>/root-api-key.json`` (mode 0600) holds what the official stampers take.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.clock import now
from infra.db.models.organizations import Organization, User
from infra.db.unit_of_work import UnitOfWork
from infra.identity.credentials import ApiKeyParams, add_api_key
from infra.settings import Settings

KEY_FILE = "root-api-key.json"


def new_p256_keypair() -> tuple[str, str]:
    """A fresh P-256 key pair as ``(private hex, compressed public hex)``."""
    private = ec.generate_private_key(ec.SECP256R1())
    private_hex = format(private.private_numbers().private_value, "064x")
    public_hex = private.public_key().public_bytes(Encoding.X962, PublicFormat.CompressedPoint).hex()
    return private_hex, public_hex


def create_organization(session: Session, name: str, public_key: str,
                        parent_id: str | None = None) -> tuple[Organization, User]:
    """An organization with one root user holding the P-256 API key ``public_key``."""
    org = Organization(name=name, root_quorum_threshold=1, parent_id=parent_id)
    session.add(org)
    session.flush()
    user = User(organization_id=org.id, name="root", is_root=True)
    session.add(user)
    session.flush()
    add_api_key(session, org.id, user.id,
                ApiKeyParams(api_key_name="root", public_key=public_key,
                             curve_type="API_KEY_CURVE_P256"), now())
    return org, user


def ensure_root(new_uow: Callable[[], UnitOfWork], settings: Settings,
                name: str = "Root Organization") -> Path | None:
    """Create the root organization if the database has none; return the key file path."""
    with new_uow() as uow:
        if uow.session.scalar(select(Organization.id).limit(1)) is not None:
            return None
        private_hex, public_hex = new_p256_keypair()
        org, user = create_organization(uow.session, name, public_hex)
        record: dict[str, Any] = {
            "organizationId": org.id,
            "userId": user.id,
            "apiPublicKey": public_hex,
            "apiPrivateKey": private_hex,
            "baseUrl": settings.effective_base_url,
        }
        path = settings.data_dir / KEY_FILE
        _write_private(path, json.dumps(record, indent=2) + "\n")
        uow.commit()
    return path


def _write_private(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(content)
    os.chmod(path, 0o600)
