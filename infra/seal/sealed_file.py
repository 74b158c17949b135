"""The sealed keyring file (``<data dir>/keyring.sealed``, ``WALLETD_KEYRING_FILE``).

One JSON document, mode 0600, replaced atomically (temp file, fsync, rename)::

    {"format": "walletd-sealed-keyring/1",
     "deployment": "<random id>",            bound into every ciphertext below
     "seal": {"type": "shamir", ...},         the seal's non-secret parameters
     "root_version": 1,
     "wrapped_root": "...",                   the root key, as the seal wrapped it
     "recovery": {"shares": 5, "threshold": 3, "verifier": "<hmac>"},   auto-unseal types
     "keyring": "<base64url(nonce ‖ AES-256-GCM(root key, contents))>",
     "public": {"auth_proxy_public_key": "<hex>"},
     "events": [{"id": "<random>", "event": "SEAL_INITIALISED", "time": ..., ...}, ...]}

The contents (:class:`Contents`) are every key of the deployment: every master-key version
(which wraps the data keys of wallets, private keys and sealed service keys), the webhook
signing seeds, the auth proxy's private key. Nothing in the file is usable without the root
key, and the root key is only ever in the file as the seal wrapped it.

``events`` is the seal's public history: every change of the key hierarchy the file holds
(initialised, rekeyed, migrated, root key rotated, plaintext files imported) appends one,
in the same atomic replacement as the change. No database is needed for a seal operation
(``walletd operator init`` runs before the first migration); the audit log records each event
once, from the consensus worker (``infra.audit.seal_events``).
"""

from __future__ import annotations

import base64
import binascii
import errno
import json
import os
import secrets
import stat
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from infra.crypto.keyring import MasterKeyring, load_keyring_value
from infra.private_file import write_private
from infra.seal.errors import Sealed

FORMAT = "walletd-sealed-keyring/1"
CONTENTS_FORMAT = "walletd-keyring/1"
FILENAME = "keyring.sealed"
ROOT_BYTES = 32
_NONCE = 12


def b64u(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Contents:
    """What the root key protects."""

    master: MasterKeyring
    webhooks: dict[str, Any] = field(default_factory=dict)
    auth_proxy: dict[str, str] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        return json.dumps({"format": CONTENTS_FORMAT, "master": json.loads(self.master.to_json()),
                           "webhooks": self.webhooks, "auth_proxy": self.auth_proxy}).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> Contents:
        doc = json.loads(raw)
        if doc.get("format") != CONTENTS_FORMAT:
            raise ValueError("contents format")
        return cls(master=load_keyring_value(json.dumps(doc["master"])),
                   webhooks=dict(doc.get("webhooks") or {}),
                   auth_proxy=dict(doc.get("auth_proxy") or {}))


@dataclass(frozen=True)
class SealedFile:
    """The parsed document (no secret in clear)."""

    deployment: str
    seal: dict[str, Any]
    root_version: int
    wrapped_root: str
    keyring: str
    recovery: dict[str, Any] | None = None
    public: dict[str, str] = field(default_factory=dict)
    events: tuple[dict[str, Any], ...] = ()

    @property
    def seal_type(self) -> str:
        return str(self.seal.get("type", ""))

    def aad(self) -> bytes:
        return f"walletd/keyring/v1|{self.deployment}|{self.root_version}".encode()

    def open(self, root: bytes) -> Contents:
        """Decrypt the contents with ``root``.

        Raises:
            Sealed: the blob was tampered with, or ``root`` is not this file's root key.
        """
        try:
            blob = unb64u(self.keyring)
            raw = AESGCM(root).decrypt(blob[:_NONCE], blob[_NONCE:], self.aad())
            return Contents.from_bytes(raw)
        except (InvalidTag, ValueError, KeyError, TypeError, binascii.Error):
            raise Sealed("the sealed keyring does not decrypt with this root key (tampered "
                         "file, or another deployment's seal); the service stays sealed") from None

    def with_contents(self, root: bytes, contents: Contents) -> SealedFile:
        """A copy whose contents are ``contents`` encrypted under ``root``."""
        nonce = os.urandom(_NONCE)
        blob = nonce + AESGCM(root).encrypt(nonce, contents.to_bytes(), self.aad())
        return replace(self, keyring=b64u(blob))

    def with_event(self, event: str, **details: Any) -> SealedFile:
        """A copy whose history ends with ``event`` (non-secret details only), stating the
        seal type and root key version of this copy."""
        entry = {"id": secrets.token_hex(16), "event": event,
                 "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                 "deployment": self.deployment, "sealType": self.seal_type,
                 "rootKeyVersion": self.root_version, **details}
        return replace(self, events=(*self.events, entry))

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "deployment": self.deployment, "seal": self.seal,
                           "root_version": self.root_version, "wrapped_root": self.wrapped_root,
                           "recovery": self.recovery, "keyring": self.keyring,
                           "public": self.public, "events": list(self.events)}, indent=2)

    @classmethod
    def new(cls, seal: dict[str, Any], wrapped_root: str, root: bytes, contents: Contents,
            public: dict[str, str], recovery: dict[str, Any] | None) -> SealedFile:
        blank = cls(deployment=secrets.token_hex(8), seal=seal, root_version=1,
                    wrapped_root=wrapped_root, keyring="", recovery=recovery, public=public)
        return blank.with_contents(root, contents)


def parse(text: str) -> SealedFile:
    """Parse the document.

    Raises:
        Sealed: not a sealed keyring document.
    """
    try:
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            raise ValueError("format")
        return SealedFile(deployment=str(doc["deployment"]), seal=dict(doc["seal"]),
                          root_version=int(doc["root_version"]),
                          wrapped_root=str(doc["wrapped_root"]), keyring=str(doc["keyring"]),
                          recovery=doc.get("recovery"), public=dict(doc.get("public") or {}),
                          events=tuple(dict(e) for e in doc.get("events") or ()))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise Sealed(f"the sealed keyring is malformed; expected {FORMAT} JSON") from None


def read(path: str | os.PathLike[str]) -> SealedFile | None:
    """The file at ``path``, ``None`` when it does not exist (not initialised).

    Raises:
        Sealed: unreadable, group/other-accessible, or malformed.
    """
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as ex:
        raise Sealed(f"cannot read the sealed keyring {p}: {ex.strerror}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise Sealed(f"{p} is accessible by group or others; run chmod 600 on it")
    try:
        return parse(p.read_text(encoding="utf-8"))
    except OSError as ex:
        raise Sealed(f"cannot read the sealed keyring {p}: {ex.strerror}") from None


def stamp(path: str | os.PathLike[str]) -> tuple[int, int]:
    """(mtime_ns, size) of the file, ``(0, 0)`` when absent: tells a process to reload."""
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


def write(path: str | os.PathLike[str], sealed: SealedFile, *, exclusive: bool = False) -> None:
    """Atomically replace (or, ``exclusive``, create) the file with mode 0600.

    Raises:
        FileExistsError: ``exclusive`` and the file exists (another process initialised it).
    """
    if not write_private(path, sealed.to_json(), exclusive=exclusive):
        raise FileExistsError(errno.EEXIST, "the sealed keyring exists already", str(path))
