"""BIP-39 mnemonics, seeds, and BIP-32 / SLIP-10 derivation (bip-utils, CRYPTO.md §2).

* secp256k1: BIP-32 (``Bip32Slip10Secp256k1``; identical to SLIP-10 secp256k1).
* ed25519: SLIP-10 (``Bip32Slip10Ed25519``), which allows hardened indices only; a
  non-hardened ed25519 component is rejected with a 400 naming the component.

PBKDF2 (BIP-39 mnemonic → seed, ~2 ms) and path derivation (~0.4-0.8 ms) are cached per
process in small LRU caches keyed by a SHA-256 digest of the secret, never by the secret
itself, so repeated signing with the same account costs one dictionary look-up.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from bip_utils import (
    Bip32KeyError,
    Bip32Slip10Ed25519,
    Bip32Slip10Secp256k1,
    Bip39Languages,
    Bip39MnemonicGenerator,
    Bip39MnemonicValidator,
    Bip39SeedGenerator,
    Bip39WordsNum,
)
from bip_utils.bip.bip32.base import Bip32Base

from infra.crypto.addresses import Curve
from infra.errors import InvalidRequest

MNEMONIC_LENGTHS: tuple[int, ...] = (12, 15, 18, 21, 24)
DEFAULT_MNEMONIC_LENGTH = 12
HARDENED = 0x80000000

_WORDS_NUM = {
    12: Bip39WordsNum.WORDS_NUM_12,
    15: Bip39WordsNum.WORDS_NUM_15,
    18: Bip39WordsNum.WORDS_NUM_18,
    21: Bip39WordsNum.WORDS_NUM_21,
    24: Bip39WordsNum.WORDS_NUM_24,
}

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """A small thread-safe LRU map (the per-process node and seed caches)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> V | None:
        """Return the cached value (and mark it recently used) or ``None``."""
        with self._lock:
            value = self._data.get(key)
            if value is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: K, value: V) -> None:
        """Insert ``value``, evicting the least recently used entry when full."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry (and the counters)."""
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)


_SEEDS: LruCache[bytes, bytes] = LruCache(256)
_NODES: LruCache[tuple[bytes, Curve, tuple[int, ...]], Bip32Base] = LruCache(4096)


def clear_caches() -> None:
    """Forget every cached seed and node (tests; key rotation never needs it)."""
    _SEEDS.clear()
    _NODES.clear()


def cache_stats() -> dict[str, int]:
    """Hit/miss counters of the seed and node caches."""
    return {
        "seed_hits": _SEEDS.hits,
        "seed_misses": _SEEDS.misses,
        "node_hits": _NODES.hits,
        "node_misses": _NODES.misses,
    }


def _digest(*parts: bytes) -> bytes:
    h = hashlib.sha256(b"walletd-hd-cache-v1")
    for part in parts:
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    return h.digest()


# --- mnemonics -------------------------------------------------------------------------


def parse_mnemonic_length(value: object) -> int:
    """Validate ``mnemonicLength`` (``None`` → 12).

    Raises:
        InvalidRequest: naming the accepted values.
    """
    if value is None or value == "":
        return DEFAULT_MNEMONIC_LENGTH
    length = -1
    if isinstance(value, int) and not isinstance(value, bool):
        length = value
    elif isinstance(value, str) and value.strip().isdigit():
        length = int(value)
    if length not in MNEMONIC_LENGTHS:
        raise InvalidRequest(
            f"mnemonicLength {value!r} is not supported; send one of 12, 15, 18, 21, 24 "
            "(default 12)",
            field="mnemonicLength",
        )
    return length


def generate_mnemonic(length: int = DEFAULT_MNEMONIC_LENGTH) -> str:
    """A fresh English BIP-39 mnemonic of ``length`` words (OS randomness)."""
    words = _WORDS_NUM[parse_mnemonic_length(length)]
    return str(Bip39MnemonicGenerator(Bip39Languages.ENGLISH).FromWordsNumber(words))


def normalize_mnemonic(mnemonic_secret: str) -> str:
    """NFKD-normalise, lower-case and single-space a mnemonic, then validate it.

    Raises:
        InvalidRequest: ``invalid mnemonic`` (the words are never echoed back).
    """
    if not isinstance(mnemonic_secret, str):
        raise InvalidRequest("invalid mnemonic: expected text", field="mnemonic")
    words = unicodedata.normalize("NFKD", mnemonic_secret).lower().split()
    normalized = " ".join(words)
    if len(words) not in MNEMONIC_LENGTHS:
        raise InvalidRequest(
            f"invalid mnemonic: it has {len(words)} words; a BIP-39 mnemonic has "
            "12, 15, 18, 21 or 24 English words",
            field="mnemonic",
        )
    if not Bip39MnemonicValidator(Bip39Languages.ENGLISH).IsValid(normalized):
        raise InvalidRequest(
            "invalid mnemonic: unknown word or bad checksum; send a BIP-39 English mnemonic",
            field="mnemonic",
        )
    return normalized


def mnemonic_to_seed(mnemonic_secret: str, passphrase_secret: str = "") -> bytes:
    """The 64-byte BIP-39 seed (validated, cached by a digest of the inputs).

    The cache is keyed by the digest of the text as given, so a hit skips validation and
    PBKDF2 alike; a miss validates and normalises first.
    """
    if not isinstance(mnemonic_secret, str) or not isinstance(passphrase_secret, str):
        raise InvalidRequest("invalid mnemonic: expected text", field="mnemonic")
    key = _digest(mnemonic_secret.encode(), passphrase_secret.encode())
    seed_secret = _SEEDS.get(key)
    if seed_secret is None:
        normalized = normalize_mnemonic(mnemonic_secret)
        seed_secret = bytes(
            Bip39SeedGenerator(normalized, Bip39Languages.ENGLISH).Generate(passphrase_secret)
        )
        _SEEDS.put(key, seed_secret)
    return seed_secret


# --- paths ---------------------------------------------------------------------------


def parse_path(path: str, curve: Curve | None = None) -> tuple[int, ...]:
    """Parse ``m/44'/60'/0'/0/0`` into indices (``'``, ``h`` or ``H`` mark hardened).

    Raises:
        InvalidRequest: for a malformed path, or a non-hardened component on ed25519.
    """
    if not isinstance(path, str) or not path.strip():
        raise InvalidRequest("path is required, e.g. m/44'/60'/0'/0/0", field="path")
    parts = path.strip().split("/")
    if parts[0] != "m":
        raise InvalidRequest(
            f"path {path!r} must start with 'm/', e.g. m/44'/60'/0'/0/0", field="path"
        )
    indices: list[int] = []
    for part in parts[1:]:
        hardened = part.endswith(("'", "h", "H"))
        digits = part[:-1] if hardened else part
        if not digits.isdigit() or int(digits) >= HARDENED:
            raise InvalidRequest(
                f"path component {part!r} of {path!r} is not an index below 2^31 "
                "(write hardened indices as 44')",
                field="path",
            )
        if curve is Curve.ED25519 and not hardened:
            raise InvalidRequest(
                f"ed25519 (SLIP-10) supports hardened derivation only: path component "
                f"{part!r} of {path!r} must be hardened; send {digits}' instead",
                field="path",
            )
        indices.append(int(digits) + (HARDENED if hardened else 0))
    return tuple(indices)


# --- derivation ------------------------------------------------------------------------


@dataclass(frozen=True)
class DerivedKey:
    """A derived key pair. ``public_key`` is 33-byte compressed (secp256k1) or 32-byte ed25519."""

    curve: Curve
    path: str
    private_key_secret: bytes = field(repr=False)
    public_key: bytes


def _root(curve: Curve, seed_secret: bytes) -> Bip32Base:
    if curve is Curve.SECP256K1:
        return Bip32Slip10Secp256k1.FromSeed(seed_secret)
    if curve is Curve.ED25519:
        return Bip32Slip10Ed25519.FromSeed(seed_secret)
    raise InvalidRequest(
        f"HD wallet accounts support CURVE_SECP256K1 and CURVE_ED25519, not {curve.value}",
        field="curve",
    )


def _node(seed_id: bytes, seed_secret: bytes, curve: Curve, indices: tuple[int, ...]) -> Bip32Base:
    key = (seed_id, curve, indices)
    node = _NODES.get(key)
    if node is not None:
        return node
    if not indices:
        node = _root(curve, seed_secret)
    else:
        parent = _node(seed_id, seed_secret, curve, indices[:-1])
        try:
            node = parent.ChildKey(indices[-1])
        except Bip32KeyError as ex:  # pragma: no cover - probability ~2^-127
            raise InvalidRequest("this path yields an invalid key; use another index") from ex
    _NODES.put(key, node)
    return node


def derive_key(seed_secret: bytes, curve: Curve, path: str) -> DerivedKey:
    """Derive the key at ``path`` from a BIP-39 seed on ``curve`` (cached per process)."""
    indices = parse_path(path, curve)
    node = _node(_digest(seed_secret), seed_secret, curve, indices)
    private_secret = bytes(node.PrivateKey().Raw().ToBytes())
    if curve is Curve.SECP256K1:
        public = bytes(node.PublicKey().RawCompressed().ToBytes())
    else:
        public = bytes(node.PublicKey().RawCompressed().ToBytes())[1:]
    return DerivedKey(curve=curve, path=path, private_key_secret=private_secret, public_key=public)


def derive_from_mnemonic(
    mnemonic_secret: str, curve: Curve, path: str, passphrase_secret: str = ""
) -> DerivedKey:
    """Convenience: mnemonic → seed → key at ``path``."""
    return derive_key(mnemonic_to_seed(mnemonic_secret, passphrase_secret), curve, path)


def same_secret(a: bytes, b: bytes) -> bool:
    """Constant-time comparison of two secrets."""
    return hmac.compare_digest(a, b)
