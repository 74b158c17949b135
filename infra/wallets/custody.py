"""Key custody in worker processes: the master keyring, sealing rows, the bundle signer.

Only worker-type processes (``worker``, ``embedded``, ``cli``) load custody (``infra.bootstrap``
builds it into ``WorkerServices.custody``); the ingress role's settings carry no master-key location, so
:func:`load_custody` refuses to run there. Every secret column is sealed with a data key of
its own, bound to the row by its context (``wallet:<id>``, ``private_key:<id>``, …).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.crypto import hpke
from infra.crypto.bundles import ServiceSigner
from infra.crypto.envelope import EnvelopeCipher, SealedSecret, wrapped_key_version
from infra.crypto.keyring import (
    KeyringUnavailable,
    MasterKeyring,
    UnknownKeyVersion,
    init_keyring_file,
    load_keyring_file,
)
from infra.db.models.oauth import Oauth2Credential
from infra.db.models.secrets import Secret
from infra.db.models.wallets import ImportTarget, PrivateKey, ServiceKey, Wallet
from infra.errors import Internal

log = logging.getLogger(__name__)

SIGNER_NAME = "bundle-signer"
RELOAD_CHECK_S = 1.0
#: Tables with ``wrapped_key`` / ``ciphertext`` columns (a model outside wallets names its
#: context with a ``SEALED_KIND`` class attribute): every table whose rows hold a sealed
#: secret (``walletd keys rotate`` rewraps them all).
SEALED_TABLES: Final[tuple[type[Any], ...]] = (
    Wallet, PrivateKey, ImportTarget, ServiceKey,
    Oauth2Credential,  # OAuth 2.0 client secrets
    Secret,  # imported secrets (docs/SECRETS.md)
)


def row_context(row: Any) -> bytes:
    """The associated data binding a sealed secret to its row."""
    if isinstance(row, ServiceKey):
        return f"service_key:{row.name}".encode()
    kind = getattr(type(row), "SEALED_KIND", None) or {
        Wallet: "wallet", PrivateKey: "private_key", ImportTarget: "import_target"}[type(row)]
    return f"{kind}:{row.id}".encode()


@dataclass
class Custody:
    """The master keyring of this process and what it seals/opens."""

    keyring_path: str
    keyring: MasterKeyring
    session_factory: Any = None
    _signer: ServiceSigner | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _mtime: float = 0.0
    _checked: float = 0.0

    def __post_init__(self) -> None:
        self._mtime = self._file_mtime()
        self._checked = time.monotonic()

    def _file_mtime(self) -> float:
        try:
            return os.stat(self.keyring_path).st_mtime
        except OSError:
            return 0.0

    def reload(self) -> None:
        """Re-read the keyring file (after ``walletd keys rotate`` in another process)."""
        with self._lock:
            self._mtime = self._file_mtime()
            self.keyring = load_keyring_file(self.keyring_path)

    def refresh(self) -> None:
        """Reload when the file changed (checked at most once a second).

        New data keys are then wrapped with the newest version even in a worker that started
        before ``walletd keys rotate`` ran.
        """
        now = time.monotonic()
        if now - self._checked < RELOAD_CHECK_S:
            return
        self._checked = now
        if self._file_mtime() != self._mtime:
            self.reload()

    def seal_row(self, row: Any, secret: bytes) -> None:
        """Seal ``secret`` into ``row.wrapped_key`` / ``row.ciphertext``."""
        self.refresh()
        sealed = EnvelopeCipher(self.keyring).seal(secret, row_context(row))
        row.wrapped_key, row.ciphertext = sealed.wrapped_key, sealed.ciphertext

    def open_row(self, row: Any) -> bytes:
        """Decrypt a row's secret, re-reading the keyring once for an unknown version."""
        sealed = SealedSecret(row.wrapped_key, row.ciphertext)
        try:
            return EnvelopeCipher(self.keyring).open(sealed, row_context(row))
        except UnknownKeyVersion:
            self.reload()
            return EnvelopeCipher(self.keyring).open(sealed, row_context(row))

    def rewrap_row(self, row: Any) -> bool:
        """Rewrap a row's data key under the current version; ``True`` if it changed."""
        envelope = EnvelopeCipher(self.keyring)
        if not envelope.needs_rewrap(row.wrapped_key):
            return False
        row.wrapped_key = envelope.rewrap(row.wrapped_key, row_context(row))
        return True

    def signer(self) -> ServiceSigner:
        """The service's bundle signer (created on first use in its own transaction)."""
        if self._signer is None:
            if self.session_factory is None:
                raise Internal("key custody has no database access")
            with self.session_factory() as session:
                self._signer = ensure_signer(session, self)
        return self._signer


def load_custody(master_key_file: str) -> Custody:
    """Load (creating on first start) the keyring at ``master_key_file``.

    Raises:
        KeyringUnavailable: when no location is configured (the ingress role) or the file
            is unusable.
    """
    if not master_key_file:
        raise KeyringUnavailable(
            "this process has no master key location (the ingress role never loads keys)"
        )
    return Custody(master_key_file, init_keyring_file(master_key_file))


def ensure_signer(session: Session, custody: Custody) -> ServiceSigner:
    """Load the bundle signer, creating and storing it once (race-safe across processes)."""
    row = session.get(ServiceKey, SIGNER_NAME)
    if row is None:
        signer = ServiceSigner.generate()
        row = ServiceKey(name=SIGNER_NAME, public_key=signer.public_key_hex)
        custody.seal_row(row, hpke.private_key_to_bytes(signer.private_key))
        try:
            with session.begin_nested():
                session.add(row)
            session.commit()
            return signer
        except IntegrityError:
            session.rollback()
            row = session.get(ServiceKey, SIGNER_NAME)
            if row is None:  # pragma: no cover - defensive
                raise
    return ServiceSigner.from_bytes(custody.open_row(row))


def signer_public_key(session: Session) -> str | None:
    """The signer's public key (uncompressed hex), readable without any key material."""
    row = session.get(ServiceKey, SIGNER_NAME)
    return row.public_key if row is not None else None


def sealed_rows(session: Session) -> Iterator[Any]:
    """Every row holding a sealed secret."""
    for table in SEALED_TABLES:
        yield from session.scalars(select(table))


def versions_in_use(session: Session) -> dict[int, int]:
    """How many sealed rows each master-key version wraps."""
    counts: dict[int, int] = {}
    for row in sealed_rows(session):
        version = wrapped_key_version(row.wrapped_key)
        counts[version] = counts.get(version, 0) + 1
    return counts


def rewrap_all(session: Session, custody: Custody) -> int:
    """Rewrap every sealed row under the current master version; returns how many changed."""
    changed = 0
    for row in sealed_rows(session):
        if custody.rewrap_row(row):
            changed += 1
    return changed
