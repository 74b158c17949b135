"""Where the webhook signing keys live at run time.

The private ring is part of the sealed keyring (:mod:`infra.seal`), read by notifier processes
through ``infra.seal.holders.SealedKeyRing``, which follows ``walletd webhooks rotate-key``. The plaintext
ring file of older deployments (``webhook-signing-keys.json``, :class:`KeyRingFile`) is only
read to import it into the seal. Only public keys go
to the database (``webhook_signing_keys``), from which any ingress serves the JWKS: the
ingress never reads private key material.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.webhooks import WebhookSigningPublicKey
from infra.webhooks.jwks import jwk
from infra.webhooks.signing import (
    WebhookKeyRing,
    WebhookSigningKey,
    load_keyring,
    load_or_create_keyring,
    save_keyring,
)

KEYRING_FILE = "webhook-signing-keys.json"


def keyring_path(data_dir: str | os.PathLike[str]) -> Path:
    """The ring's path under a data directory."""
    return Path(data_dir) / KEYRING_FILE


class KeyRingFile:
    """A key ring backed by a file; re-read whenever the file's mtime or size changes."""

    def __init__(self, path: str | os.PathLike[str], *, now_ms: int) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ring = load_or_create_keyring(self.path, now_ms=now_ms)
        self._stamp = self._file_stamp()

    def _file_stamp(self) -> tuple[int, int]:
        stat = self.path.stat()
        return stat.st_mtime_ns, stat.st_size

    def ring(self) -> WebhookKeyRing:
        """The current ring (reloaded if the file changed)."""
        with self._lock:
            try:
                stamp = self._file_stamp()
            except OSError:
                return self._ring
            if stamp != self._stamp:
                self._ring = load_keyring(self.path)
                self._stamp = stamp
            return self._ring


def rotate_file(path: str | os.PathLike[str], *, now_ms: int, overlap_ms: int) -> WebhookKeyRing:
    """Add a fresh key to the ring at ``path`` (see ``WebhookKeyRing.rotate``) and save it."""
    ring = load_keyring(path).rotate(WebhookSigningKey.generate(), now_ms=now_ms, overlap_ms=overlap_ms)
    save_keyring(ring, path)
    return ring


def publish(session: Session, ring: WebhookKeyRing) -> None:
    """Write the ring's public keys (and windows) to the database for the JWKS endpoint."""
    rows = {r.key_id: r for r in session.scalars(select(WebhookSigningPublicKey))}
    for key in ring.keys:
        row = rows.get(key.key_id)
        if row is None:
            row = WebhookSigningPublicKey(key_id=key.key_id, public_key=key.public_key.hex())
            session.add(row)
        row.activates_at_ms = key.activates_at_ms
        row.retires_at_ms = key.retires_at_ms
    session.flush()


def jwks_from_database(session: Session, *, now_ms: int) -> dict[str, list[dict[str, Any]]]:
    """The JWKS document of every published, unretired key (newest activation first)."""
    rows = session.scalars(
        select(WebhookSigningPublicKey).order_by(
            WebhookSigningPublicKey.activates_at_ms.desc(), WebhookSigningPublicKey.key_id
        )
    ).all()
    live = [r for r in rows if r.retires_at_ms is None or now_ms < r.retires_at_ms]
    return {"keys": [jwk(r.key_id, bytes.fromhex(r.public_key)) for r in live]}
