"""Ed25519 webhook signatures and the signing key ring (PROTOCOL.md §9).

Every delivery attempt carries a fresh timestamp and signature over::

    b"v1.ed25519.<keyId>.<timestampMs>.<eventId>." + raw body bytes

and the nine ``X-Turnkey-*`` headers that ``@turnkey/crypto``'s
``verifyTurnkeyWebhookSignature`` requires. The signature is the 64-byte Ed25519 signature in
lowercase hex.

Keys rotate with overlap. A :class:`WebhookKeyRing` holds keys with two instants each: when the
key may start signing (``activates_at_ms``) and when it stops being published in the JWKS
(``retires_at_ms``). The newest activated key signs; every key not yet retired is published,
including one that will only sign later, so receivers that cache the JWKS for its ``max-age``
already know a key before the first signature made with it arrives.

Key material never comes from the environment: it is passed in, or read by
:func:`load_keyring` from a path the caller chooses.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from infra.errors import InvalidSignature, WalletError
from infra.private_file import write_private

SIGNATURE_VERSION = "v1"
SIGNATURE_ALGORITHM = "ed25519"
WEBHOOK_VERSION = "1"

#: One JWKS ``max-age`` (PROTOCOL.md §9): how long a new key is published before it signs.
DEFAULT_OVERLAP_MS = 86_400_000
#: Receivers reject timestamps further than this from their clock (Standard Webhooks: 5 min).
DEFAULT_TOLERANCE_MS = 300_000

HEADER_ORGANIZATION_ID = "X-Turnkey-Organization-Id"
HEADER_EVENT_TYPE = "X-Turnkey-Event-Type"
HEADER_TIMESTAMP = "X-Turnkey-Timestamp"
HEADER_WEBHOOK_VERSION = "X-Turnkey-Webhook-Version"
HEADER_EVENT_ID = "X-Turnkey-Event-Id"
HEADER_KEY_ID = "X-Turnkey-Signature-Key-Id"
HEADER_ALGORITHM = "X-Turnkey-Signature-Algorithm"
HEADER_SIGNATURE_VERSION = "X-Turnkey-Signature-Version"
HEADER_SIGNATURE = "X-Turnkey-Signature"

# Key and event ids are dot-separated fields of the signed message: no dots, no spaces.
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_SEED_BYTES = 32


class WebhookKeyInvalid(WalletError):
    """A webhook signing key or key-ring file is malformed, or no key can sign now."""

    code = "webhook_key_invalid"


class InvalidWebhookSignature(InvalidSignature):
    """A webhook delivery's headers or signature did not verify."""

    code = "invalid_webhook_signature"


def _check_token(value: str, what: str) -> str:
    if not _TOKEN.fullmatch(value):
        raise WebhookKeyInvalid(f"{what} must match {_TOKEN.pattern}")
    return value


@dataclass(frozen=True)
class WebhookSigningKey:
    """One Ed25519 signing key with the window in which it signs and is published.

    Attributes:
        key_id: The ``kid`` published in the JWKS and sent in ``X-Turnkey-Signature-Key-Id``.
        seed_secret: The 32-byte Ed25519 private seed.
        activates_at_ms: From this instant (Unix ms) the key may sign.
        retires_at_ms: From this instant the key is neither published nor used; ``None``: never.
    """

    key_id: str
    seed_secret: bytes = field(repr=False)
    activates_at_ms: int = 0
    retires_at_ms: int | None = None

    def __post_init__(self) -> None:
        _check_token(self.key_id, "key id")
        if len(self.seed_secret) != _SEED_BYTES:
            raise WebhookKeyInvalid("an Ed25519 seed is 32 bytes")
        if self.retires_at_ms is not None and self.retires_at_ms < self.activates_at_ms:
            raise WebhookKeyInvalid("a key cannot retire before it activates")

    @classmethod
    def generate(cls, *, activates_at_ms: int = 0, key_id: str | None = None) -> WebhookSigningKey:
        """A fresh random key; its id is ``whk_`` and 16 random hex digits unless given."""
        return cls(
            key_id=key_id or f"whk_{secrets.token_hex(8)}",
            seed_secret=secrets.token_bytes(_SEED_BYTES),
            activates_at_ms=activates_at_ms,
        )

    @property
    def public_key(self) -> bytes:
        """The raw 32-byte Ed25519 public key."""
        return bytes(SigningKey(self.seed_secret).verify_key)

    def is_published(self, now_ms: int) -> bool:
        """Whether the key belongs in the JWKS at ``now_ms``."""
        return self.retires_at_ms is None or now_ms < self.retires_at_ms

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message``."""
        return SigningKey(self.seed_secret).sign(message).signature


@dataclass(frozen=True)
class WebhookKeyRing:
    """An immutable set of signing keys; :meth:`rotate` returns a new ring."""

    keys: tuple[WebhookSigningKey, ...]

    def __post_init__(self) -> None:
        ids = [k.key_id for k in self.keys]
        if len(set(ids)) != len(ids):
            raise WebhookKeyInvalid("duplicate webhook key id")

    def signing_key(self, now_ms: int) -> WebhookSigningKey:
        """The key that signs at ``now_ms``: the latest activated key that is still published.

        Raises:
            WebhookKeyInvalid: No key is active at ``now_ms``.
        """
        live = [k for k in self.keys if k.activates_at_ms <= now_ms and k.is_published(now_ms)]
        if not live:
            raise WebhookKeyInvalid("no webhook signing key is active")
        return max(live, key=lambda k: (k.activates_at_ms, k.key_id))

    def published(self, now_ms: int) -> tuple[WebhookSigningKey, ...]:
        """Every key that belongs in the JWKS at ``now_ms`` (including not-yet-active ones)."""
        return tuple(k for k in self.keys if k.is_published(now_ms))

    def rotate(
        self,
        new_key: WebhookSigningKey,
        *,
        now_ms: int,
        overlap_ms: int = DEFAULT_OVERLAP_MS,
    ) -> WebhookKeyRing:
        """Add ``new_key`` so receivers see it before it signs and keep the old one after.

        The new key is published now and signs from ``now_ms + overlap_ms``; every key
        published now stays published until ``now_ms + 2 * overlap_ms``. ``overlap_ms=0`` is an
        emergency rotation: the new key signs at once and the old ones disappear at once.
        Keys already retired are dropped.
        """
        if overlap_ms < 0:
            raise WebhookKeyInvalid("overlap cannot be negative")
        retire_at = now_ms + 2 * overlap_ms
        kept = []
        for key in self.published(now_ms):
            ends = retire_at if key.retires_at_ms is None else min(key.retires_at_ms, retire_at)
            kept.append(replace(key, retires_at_ms=max(ends, key.activates_at_ms)))
        fresh = replace(new_key, activates_at_ms=now_ms + overlap_ms, retires_at_ms=None)
        return WebhookKeyRing((*kept, fresh))


def signed_message(key_id: str, timestamp_ms: int, event_id: str, body: bytes) -> bytes:
    """The exact bytes signed: ``v1.ed25519.<keyId>.<timestampMs>.<eventId>.`` + body."""
    _check_token(key_id, "key id")
    _check_token(event_id, "event id")
    if timestamp_ms < 0:
        raise WebhookKeyInvalid("timestamp must be a non-negative number of milliseconds")
    prefix = f"{SIGNATURE_VERSION}.{SIGNATURE_ALGORITHM}.{key_id}.{timestamp_ms}.{event_id}."
    return prefix.encode("ascii") + body


def sign_delivery(
    key: WebhookSigningKey,
    *,
    body: bytes,
    event_id: str,
    event_type: str,
    organization_id: str,
    timestamp_ms: int,
) -> dict[str, str]:
    """The headers of one delivery attempt (without ``Content-Type``).

    Args:
        key: The ring's current signing key.
        body: The exact request body bytes.
        event_id: Stable across retries of the same event.
        event_type: For example ``ACTIVITY_UPDATES``.
        organization_id: The organization the event is about.
        timestamp_ms: This attempt's time (Unix ms); every retry signs afresh.
    """
    signature = key.sign(signed_message(key.key_id, timestamp_ms, event_id, body))
    return {
        HEADER_ORGANIZATION_ID: organization_id,
        HEADER_EVENT_TYPE: event_type,
        HEADER_TIMESTAMP: str(timestamp_ms),
        HEADER_WEBHOOK_VERSION: WEBHOOK_VERSION,
        HEADER_EVENT_ID: event_id,
        HEADER_KEY_ID: key.key_id,
        HEADER_ALGORITHM: SIGNATURE_ALGORITHM,
        HEADER_SIGNATURE_VERSION: SIGNATURE_VERSION,
        HEADER_SIGNATURE: signature.hex(),
    }


def _header(headers: Mapping[str, str], name: str) -> str:
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get(name.lower())
    if not value:
        raise InvalidWebhookSignature(f"missing header {name}")
    return value


def verify_delivery(
    headers: Mapping[str, str],
    body: bytes,
    public_keys: Mapping[str, bytes],
    *,
    now_ms: int,
    tolerance_ms: int = DEFAULT_TOLERANCE_MS,
) -> str:
    """Check a received delivery the way a receiver should; return its event id.

    Args:
        headers: The request headers (any case).
        body: The raw body bytes.
        public_keys: ``kid`` → raw 32-byte Ed25519 public key (see ``jwks.public_keys``).
        now_ms: The receiver's clock.
        tolerance_ms: Largest accepted distance between ``now_ms`` and the timestamp.

    Raises:
        InvalidWebhookSignature: Anything is missing, stale, unknown or does not verify.
    """
    if _header(headers, HEADER_SIGNATURE_VERSION) != SIGNATURE_VERSION:
        raise InvalidWebhookSignature("unsupported signature version")
    if _header(headers, HEADER_ALGORITHM) != SIGNATURE_ALGORITHM:
        raise InvalidWebhookSignature("unsupported signature algorithm")
    raw_ts = _header(headers, HEADER_TIMESTAMP)
    if not raw_ts.isdigit():
        raise InvalidWebhookSignature("timestamp is not a number of milliseconds")
    timestamp_ms = int(raw_ts)
    if abs(now_ms - timestamp_ms) > tolerance_ms:
        raise InvalidWebhookSignature("timestamp outside the tolerance window")
    key_id = _header(headers, HEADER_KEY_ID)
    event_id = _header(headers, HEADER_EVENT_ID)
    public = public_keys.get(key_id)
    if public is None or len(public) != _SEED_BYTES:
        raise InvalidWebhookSignature("unknown signing key")
    try:
        signature = bytes.fromhex(_header(headers, HEADER_SIGNATURE))
        message = signed_message(key_id, timestamp_ms, event_id, body)
        VerifyKey(public).verify(message, signature)
    except (ValueError, BadSignatureError, WebhookKeyInvalid) as exc:
        raise InvalidWebhookSignature("webhook signature did not verify") from exc
    return event_id


# --- persistence -------------------------------------------------------------------------


def _key_to_json(key: WebhookSigningKey) -> dict[str, Any]:
    return {
        "kid": key.key_id,
        "seed": key.seed_secret.hex(),
        "activatesAtMs": key.activates_at_ms,
        "retiresAtMs": key.retires_at_ms,
    }


def _key_from_json(item: Mapping[str, Any]) -> WebhookSigningKey:
    try:
        retires = item.get("retiresAtMs")
        return WebhookSigningKey(
            key_id=str(item["kid"]),
            seed_secret=bytes.fromhex(str(item["seed"])),
            activates_at_ms=int(item.get("activatesAtMs", 0)),
            retires_at_ms=None if retires is None else int(retires),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise WebhookKeyInvalid("malformed webhook key entry") from exc


def keyring_from_json(document: Mapping[str, Any]) -> WebhookKeyRing:
    """Parse ``{"keys": [{"kid", "seed" (hex), "activatesAtMs", "retiresAtMs"}]}``."""
    items = document.get("keys")
    if not isinstance(items, list):
        raise WebhookKeyInvalid("a webhook key ring has a 'keys' list")
    return WebhookKeyRing(tuple(_key_from_json(item) for item in items))


def keyring_to_json(ring: WebhookKeyRing) -> dict[str, Any]:
    """The document :func:`keyring_from_json` reads."""
    return {"keys": [_key_to_json(k) for k in ring.keys]}


def load_keyring(path: str | os.PathLike[str]) -> WebhookKeyRing:
    """Read a key ring from a JSON file written by :func:`save_keyring`.

    Raises:
        WebhookKeyInvalid: The file is unreadable or malformed.
    """
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise WebhookKeyInvalid(f"cannot read webhook key ring {os.fspath(path)!r}") from exc
    if not isinstance(document, dict):
        raise WebhookKeyInvalid("a webhook key ring is a JSON object")
    return keyring_from_json(document)


def _write_private(ring: WebhookKeyRing, target: Path, *, exclusive: bool) -> bool:
    """Write ``ring`` to a private temp file, then move it into place.

    With ``exclusive`` an existing ``target`` is left alone and ``False`` is returned.
    """
    return write_private(target, json.dumps(keyring_to_json(ring), indent=2),
                         exclusive=exclusive)


def save_keyring(ring: WebhookKeyRing, path: str | os.PathLike[str]) -> None:
    """Atomically write ``ring`` to ``path``, readable by the owner only."""
    _write_private(ring, Path(path), exclusive=False)


def load_or_create_keyring(path: str | os.PathLike[str], *, now_ms: int) -> WebhookKeyRing:
    """Read the ring at ``path``; on first start create it with one key active from now.

    Two processes starting together agree on one ring: creation never replaces a file.
    """
    target = Path(path)
    if not target.exists():
        ring = WebhookKeyRing((WebhookSigningKey.generate(activates_at_ms=now_ms),))
        if _write_private(ring, target, exclusive=True):
            return ring
    return load_keyring(target)


def ring_of(keys: Iterable[WebhookSigningKey]) -> WebhookKeyRing:
    """Build a ring from any iterable of keys."""
    return WebhookKeyRing(tuple(keys))
