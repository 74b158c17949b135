"""The service's own login keys: notarizer, verification-token and encryption (P-256).

* ``notarizer`` signs session JWTs (PROTOCOL.md §6);
* ``verification-token`` signs OTP verification tokens (§7.3) and OTP encryption target
  bundles (§5.5) — Turnkey's "TLS fetcher" signing key;
* ``encryption`` is what clients HPKE-encrypt secrets to (OTP codes of ``verify_otp`` V2,
  OAuth client secrets).

Each purpose is versioned: version ``N`` is the :class:`~infra.db.models.wallets.ServiceKey`
row ``<purpose>.v<N>``, its private half sealed by the master key like the bundle signer's
(so ``walletd keys rotate`` rewraps it too). The highest version is *current*: it signs and
is published at ``/public/v1/discovery/keys``. ``walletd keys service-rotate`` adds a version;
older ones keep verifying (tokens signed before the rotation stay valid until they expire) and
keep decrypting until ``walletd keys service-retire`` deletes them.

Private halves are opened only in worker-type processes (through the custody); the ingress
reads public halves only (discovery, verifying ``X-Stamp-Attested`` tokens).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.audit import leaves as audit
from infra.crypto import hpke
from infra.db.models.wallets import ServiceKey
from infra.errors import Internal, InvalidRequest, Unavailable

NOTARIZER: Final = "notarizer"
VERIFICATION_TOKEN: Final = "verification-token"
ENCRYPTION: Final = "encryption"
PURPOSES: Final = (NOTARIZER, VERIFICATION_TOKEN, ENCRYPTION)
#: Wire key of each purpose's current public half in the discovery document.
DISCOVERY_NAMES: Final = {
    NOTARIZER: "notarizerPublicKey",
    VERIFICATION_TOKEN: "verificationTokenPublicKey",
    ENCRYPTION: "encryptionPublicKey",
}
#: How long a process trusts what it read about the versions (rotation shows up after this).
VERSIONS_TTL_S: Final = 5.0

_ROW_NAME = re.compile(r"^(?P<purpose>[a-z-]+)\.v(?P<version>[0-9]+)$")


def row_name(purpose: str, version: int) -> str:
    """The ``service_keys.name`` of a purpose's version."""
    return f"{purpose}.v{version}"


def _purpose(purpose: str) -> str:
    if purpose not in PURPOSES:
        raise InvalidRequest(f"unknown service key {purpose!r}; use one of {', '.join(PURPOSES)}")
    return purpose


@dataclass(frozen=True)
class PublicVersion:
    """One stored version's public half (uncompressed P-256 hex)."""

    purpose: str
    version: int
    public_key_hex: str


def public_versions(session: Session, purpose: str) -> list[PublicVersion]:
    """Every stored version of ``purpose``, newest first (no key material read)."""
    rows = session.execute(
        select(ServiceKey.name, ServiceKey.public_key).where(
            ServiceKey.name.like(f"{_purpose(purpose)}.v%"))).all()
    out = []
    for name, public in rows:
        match = _ROW_NAME.match(name)
        if match and match["purpose"] == purpose:
            out.append(PublicVersion(purpose, int(match["version"]), public))
    return sorted(out, key=lambda v: v.version, reverse=True)


class _PublicCache:
    """Public versions per purpose, re-read at most every :data:`VERSIONS_TTL_S`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], tuple[float, list[PublicVersion]]] = {}

    def get(self, session: Session, purpose: str) -> list[PublicVersion]:
        key = (str(session.get_bind().engine.url), purpose)
        now = time.monotonic()
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and now - hit[0] < VERSIONS_TTL_S:
            return hit[1]
        versions = public_versions(session, purpose)
        if versions:
            with self._lock:
                self._entries[key] = (now, versions)
        return versions

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PUBLIC_CACHE = _PublicCache()


def verifying_keys(session: Session, purpose: str) -> list[ec.EllipticCurvePublicKey]:
    """Public keys of every live version (overlap after a rotation), newest first."""
    return [hpke.load_public_key(v.public_key_hex) for v in PUBLIC_CACHE.get(session, purpose)]


def current_public_key(session: Session, purpose: str) -> str | None:
    """The current version's public half (uncompressed hex), if the key exists yet."""
    versions = PUBLIC_CACHE.get(session, purpose)
    return versions[0].public_key_hex if versions else None


# --- private halves (worker-type processes only) -----------------------------------------


@dataclass(frozen=True)
class ServiceKeyPair:
    """An opened version of a service key."""

    purpose: str
    version: int
    private_key: ec.EllipticCurvePrivateKey

    @property
    def public_key_hex(self) -> str:
        """Uncompressed P-256 hex."""
        return hpke.uncompressed(self.private_key.public_key()).hex()


class ServiceKeys:
    """Opens (and creates) service keys with a worker's custody; caches opened versions."""

    def __init__(self, custody: Any) -> None:
        self._custody = custody
        self._opened: dict[str, ServiceKeyPair] = {}
        self._lock = threading.Lock()

    def ensure_all(self, session: Session) -> None:
        """Create version 1 of every purpose that has none (first start; race-safe)."""
        for purpose in PURPOSES:
            if not public_versions(session, purpose):
                self.add_version(session, purpose)

    def add_version(self, session: Session, purpose: str) -> int:
        """Store a new version (current from now on) and commit; returns its number.

        Two processes adding at once: the loser re-reads and uses the winner's version.
        """
        existing = public_versions(session, _purpose(purpose))
        version = existing[0].version + 1 if existing else 1
        private_key = hpke.generate_private_key()
        row = ServiceKey(name=row_name(purpose, version),
                         public_key=hpke.uncompressed(private_key.public_key()).hex())
        self._custody.seal_row(row, hpke.private_key_to_bytes(private_key))
        try:
            with session.begin_nested():
                session.add(row)
                audit.record_key_event(session, "SERVICE_KEY_ROTATED" if existing else
                                       "SERVICE_KEY_CREATED",
                                       {"purpose": purpose, "version": version,
                                        "publicKey": row.public_key})
            session.commit()
        except IntegrityError:
            session.rollback()
        PUBLIC_CACHE.clear()
        return version

    def _open(self, session: Session, purpose: str, version: int) -> ServiceKeyPair:
        name = row_name(purpose, version)
        with self._lock:
            cached = self._opened.get(name)
        if cached is not None:
            return cached
        row = session.get(ServiceKey, name)
        if row is None:
            raise Internal(f"service key {name} does not exist")
        pair = ServiceKeyPair(purpose, version,
                              hpke.private_key_from_bytes(self._custody.open_row(row)))
        with self._lock:
            self._opened[name] = pair
        return pair

    def current(self, session: Session, purpose: str) -> ServiceKeyPair:
        """The version that signs now.

        Raises:
            Unavailable: no version exists (no worker finished its first start).
        """
        versions = PUBLIC_CACHE.get(session, purpose)
        if not versions:
            raise Unavailable(f"the service {purpose} key does not exist yet; retry shortly")
        return self._open(session, purpose, versions[0].version)

    def live(self, session: Session, purpose: str) -> list[ServiceKeyPair]:
        """Every live version, newest first (decrypting with overlap after a rotation)."""
        return [self._open(session, purpose, v.version)
                for v in PUBLIC_CACHE.get(session, purpose)]


def retire_version(session: Session, purpose: str, version: int) -> None:
    """Delete a non-current version (its signatures stop verifying). Commits.

    Raises:
        InvalidRequest: the version is current or does not exist.
    """
    versions = public_versions(session, _purpose(purpose))
    if not versions or versions[0].version == version:
        raise InvalidRequest(f"{purpose} version {version} is current; rotate first")
    row = session.get(ServiceKey, row_name(purpose, version))
    if row is None:
        raise InvalidRequest(f"{purpose} has no version {version}")
    session.delete(row)
    session.commit()
    PUBLIC_CACHE.clear()


def discovery_section(session: Session) -> dict[str, Any]:
    """``notarizerPublicKey``, ``verificationTokenPublicKey``, ``encryptionPublicKey`` of the
    discovery document (``infra.discovery``).

    Raises:
        Unavailable: a key does not exist yet (no worker has started on this database).
    """
    out: dict[str, Any] = {}
    for purpose, wire in DISCOVERY_NAMES.items():
        public = current_public_key(session, purpose)
        if not public:
            raise Unavailable(
                f"the service {purpose} key does not exist yet; it is created when the first "
                "worker starts (walletd worker or walletd up): retry shortly")
        out[wire] = public
    return out
