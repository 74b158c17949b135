"""Key custody in worker processes: the master keyring, sealing rows, the bundle signer.

Only worker-type processes (``worker``, ``embedded``, ``cli``) load custody (``infra.bootstrap``
builds it into ``WorkerServices.custody`` over the process's seal, :mod:`infra.seal`): while
sealed, anything needing a key raises ``Sealed``. Every secret column is sealed with a data
key of its own, bound to the row by its context (``wallet:<id>``, ``private_key:<id>``, …).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
    """The master keyring of this process (from the seal) and what it seals/opens.

    ``keys`` returns the current master keyring, or raises ``Sealed`` while the process
    holds no root key; it re-reads the sealed keyring when another process changed it
    (``infra.seal.holders.custody_of_seal``).
    """

    keys: Callable[[], MasterKeyring]
    session_factory: Any = None
    on_change: Callable[[], None] | None = None
    _signer: ServiceSigner | None = None

    @property
    def keyring(self) -> MasterKeyring:
        """The master keyring (``Sealed`` while sealed)."""
        return self.keys()

    def reload(self) -> None:
        """Re-read the keyring now (a version unknown here may have just been added)."""
        if self.on_change is not None:
            self.on_change()

    def seal_row(self, row: Any, secret: bytes) -> None:
        """Seal ``secret`` into ``row.wrapped_key`` / ``row.ciphertext``."""
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

    def forget_signer(self) -> None:
        """Drop the signer held in memory (the process was sealed)."""
        self._signer = None


def load_custody(master_key_file: str) -> Custody:
    """Custody over a plaintext keyring file (tests of the envelope layer only; no process
    of walletd keeps its master keys in such a file: see :mod:`infra.seal`).

    Raises:
        KeyringUnavailable: when no location is configured (the ingress role).
    """
    if not master_key_file:
        raise KeyringUnavailable(
            "this process has no master key location (the ingress role never loads keys)"
        )
    init_keyring_file(master_key_file)
    return Custody(lambda: load_keyring_file(master_key_file))


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
