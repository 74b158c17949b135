"""Versioned master keys (the top of the envelope-encryption hierarchy).

A keyring holds 32-byte AES-256 master keys by version number. One version is *current*
(new data keys are wrapped with it); older versions keep unwrapping until they are
*retired*, after which unwrapping under them raises :class:`KeyVersionRetired`.

Storage: a JSON file ``<data_dir>/master-keys.json`` (mode 0600, refused when group- or
world-accessible) or the same JSON passed as a value (an environment variable read by the
settings layer, never here)::

    {"format": "walletd-master-keys/1", "current": 2,
     "keys": [{"version": 1, "key": "<base64>", "retired": false, "created_at": "..."}, ...]}

Only worker processes call these loaders.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import stat
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from infra.errors import GRPC_INTERNAL, KeyVersionRetired, WalletError
from infra.private_file import write_private

KEYRING_FORMAT = "walletd-master-keys/1"
MASTER_KEY_BYTES = 32
KEYRING_FILENAME = "master-keys.json"


class KeyringUnavailable(WalletError):
    """The master keyring cannot be loaded (missing, unreadable, insecure or malformed)."""

    code = "keyring_unavailable"
    grpc_code = GRPC_INTERNAL


class UnknownKeyVersion(WalletError):
    """Data names a master-key version this keyring does not hold."""

    code = "unknown_key_version"
    grpc_code = GRPC_INTERNAL


@dataclass(frozen=True)
class MasterKey:
    """One master-key version."""

    version: int
    key_secret: bytes = field(repr=False)
    retired: bool = False
    created_at: str = ""


@dataclass(frozen=True)
class MasterKeyring:
    """An immutable set of master-key versions with one current version."""

    keys: dict[int, MasterKey]
    current: int

    def __post_init__(self) -> None:
        if self.current not in self.keys:
            raise KeyringUnavailable("the current master key version is missing")
        if self.keys[self.current].retired:
            raise KeyringUnavailable("the current master key version is retired")
        for key in self.keys.values():
            if len(key.key_secret) != MASTER_KEY_BYTES:
                raise KeyringUnavailable("master keys must be 32 bytes")

    @classmethod
    def generate(cls) -> MasterKeyring:
        """A new keyring with one random version (1)."""
        return cls(keys={1: _new_key(1)}, current=1)

    def current_key(self) -> MasterKey:
        """The version new data keys are wrapped with."""
        return self.keys[self.current]

    def key_for_unwrap(self, version: int) -> MasterKey:
        """The key of ``version`` for unwrapping.

        Raises:
            KeyVersionRetired: the version was retired.
            UnknownKeyVersion: the keyring does not hold it.
        """
        key = self.keys.get(version)
        if key is None:
            raise UnknownKeyVersion(f"master key version {version} is not in the keyring")
        if key.retired:
            raise KeyVersionRetired(f"master key version {version} is retired")
        return key

    def with_new_version(self) -> MasterKeyring:
        """A copy with a fresh version that becomes current (rotation)."""
        version = max(self.keys) + 1
        return MasterKeyring(keys={**self.keys, version: _new_key(version)}, current=version)

    def with_retired(self, version: int) -> MasterKeyring:
        """A copy where ``version`` no longer unwraps. The current version cannot retire."""
        if version == self.current:
            raise KeyringUnavailable("the current master key version cannot be retired")
        if version not in self.keys:
            raise UnknownKeyVersion(f"master key version {version} is not in the keyring")
        return MasterKeyring(
            keys={**self.keys, version: replace(self.keys[version], retired=True)},
            current=self.current,
        )

    def active_versions(self) -> list[int]:
        """Versions that still unwrap, ascending."""
        return sorted(v for v, k in self.keys.items() if not k.retired)

    def to_json(self) -> str:
        """Serialise (contains the key material: write only to a 0600 file)."""
        return json.dumps(
            {
                "format": KEYRING_FORMAT,
                "current": self.current,
                "keys": [
                    {
                        "version": k.version,
                        "key": base64.b64encode(k.key_secret).decode(),
                        "retired": k.retired,
                        "created_at": k.created_at,
                    }
                    for k in sorted(self.keys.values(), key=lambda k: k.version)
                ],
            },
            indent=2,
        )


def _new_key(version: int) -> MasterKey:
    return MasterKey(
        version=version,
        key_secret=os.urandom(MASTER_KEY_BYTES),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def load_keyring_value(value: str) -> MasterKeyring:
    """Parse keyring JSON (file content or an environment value).

    Raises:
        KeyringUnavailable: malformed content (never echoing it).
    """
    try:
        doc = json.loads(value)
        if doc.get("format") != KEYRING_FORMAT:
            raise ValueError("format")
        keys = {
            int(item["version"]): MasterKey(
                version=int(item["version"]),
                key_secret=base64.b64decode(item["key"], validate=True),
                retired=bool(item.get("retired", False)),
                created_at=str(item.get("created_at", "")),
            )
            for item in doc["keys"]
        }
        return MasterKeyring(keys=keys, current=int(doc["current"]))
    except KeyringUnavailable:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
        raise KeyringUnavailable(
            f"master keyring is malformed; expected {KEYRING_FORMAT} JSON"
        ) from None


def load_keyring_file(path: str | os.PathLike[str]) -> MasterKeyring:
    """Load the keyring file, refusing one that group or others can access.

    Raises:
        KeyringUnavailable: missing, unreadable, too permissive or malformed.
    """
    p = Path(path)
    try:
        mode = p.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyringUnavailable(f"{p} is accessible by group or others; run chmod 600 on it")
        content = p.read_text(encoding="utf-8")
    except OSError as ex:
        raise KeyringUnavailable(f"cannot read master keyring {p}: {ex.strerror}") from None
    return load_keyring_value(content)


def save_keyring_file(path: str | os.PathLike[str], keyring: MasterKeyring) -> None:
    """Atomically write the keyring with mode 0600."""
    write_private(path, keyring.to_json())


def init_keyring_file(path: str | os.PathLike[str]) -> MasterKeyring:
    """Load the keyring, creating a fresh one (version 1) when the file does not exist.

    Creation is exclusive (hard link of a fully written temp file), so processes starting
    together agree on one keyring.
    """
    p = Path(path)
    if not p.exists():
        # Exclusive: if another process created it first, use theirs.
        write_private(p, MasterKeyring.generate().to_json(), exclusive=True)
    return load_keyring_file(p)


def rotate_keyring_file(path: str | os.PathLike[str]) -> MasterKeyring:
    """Add a master-key version, make it current, persist, and return the new keyring."""
    keyring = load_keyring_file(path).with_new_version()
    save_keyring_file(path, keyring)
    return keyring


def retire_keyring_version(path: str | os.PathLike[str], version: int) -> MasterKeyring:
    """Mark ``version`` retired in the file (run after every row was rewrapped)."""
    keyring = load_keyring_file(path).with_retired(version)
    save_keyring_file(path, keyring)
    return keyring
