"""The deployment's log key: Ed25519, sealed by the master key like every service key.

Stored as the ``service_keys`` row ``audit-log.v1`` (private half sealed by the custody, so
``walletd keys rotate`` rewraps it with the others); opened only in worker-type processes.
Its public half (readable anywhere) names the log: the checkpoint origin and note key name
are ``walletd-audit/<first 16 hex digits of SHA-256(public key)>``, and the verifier key
(``infra.audit.note.verifier_key``) is published at ``/public/v1/discovery/keys``.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.audit import note
from infra.db.models.wallets import ServiceKey
from infra.errors import Unavailable

ROW_NAME: Final = "audit-log.v1"


def origin_of(public: bytes) -> str:
    """The log's origin (and note key name) for its public key."""
    return "walletd-audit/" + hashlib.sha256(public).hexdigest()[:16]


@dataclass(frozen=True)
class LogKey:
    """The opened log key."""

    private_key: Ed25519PrivateKey

    @property
    def public(self) -> bytes:
        return note.raw_public(self.private_key.public_key())

    @property
    def origin(self) -> str:
        return origin_of(self.public)

    @property
    def verifier(self) -> str:
        return note.verifier_key(self.origin, self.public)

    def sign_note(self, text: str) -> str:
        return note.sign(text, self.origin, self.private_key)

    def sign(self, data: bytes) -> bytes:
        return self.private_key.sign(data)


def public_key(session: Session) -> bytes | None:
    """The log key's public half (no key material read), if it exists yet."""
    value = session.execute(select(ServiceKey.public_key).where(
        ServiceKey.name == ROW_NAME)).scalar_one_or_none()
    return bytes.fromhex(value) if value else None


def verifier(session: Session) -> note.Verifier:
    """The published verifier key.

    Raises:
        Unavailable: no worker has created the log key yet.
    """
    public = public_key(session)
    if public is None:
        raise Unavailable("the audit log key does not exist yet; it is created when the first "
                          "worker starts: retry shortly")
    return note.Verifier(origin_of(public), note.key_hash(origin_of(public), public), public)


def discovery_section(session: Session) -> dict[str, Any]:
    """``auditLogOrigin`` and ``auditLogVerifierKey`` once the key exists (nothing before)."""
    public = public_key(session)
    if public is None:
        return {}
    origin = origin_of(public)
    return {"auditLogOrigin": origin, "auditLogVerifierKey": note.verifier_key(origin, public)}


class LogKeys:
    """Opens (creating on first use) the log key with a worker's custody; cached."""

    def __init__(self, custody: Any) -> None:
        self._custody = custody
        self._key: LogKey | None = None
        self._lock = threading.Lock()

    def get(self, session: Session) -> LogKey:
        with self._lock:
            if self._key is not None:
                return self._key
        row = session.get(ServiceKey, ROW_NAME)
        if row is None:
            private = Ed25519PrivateKey.generate()
            raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
            row = ServiceKey(name=ROW_NAME, public_key=note.raw_public(private.public_key()).hex())
            self._custody.seal_row(row, raw)
            try:
                with session.begin_nested():
                    session.add(row)
                session.commit()
            except IntegrityError:
                session.rollback()
                row = session.get(ServiceKey, ROW_NAME)
                if row is None:  # pragma: no cover - defensive
                    raise
        key = LogKey(Ed25519PrivateKey.from_private_bytes(self._custody.open_row(row)))
        with self._lock:
            self._key = key
        return key
