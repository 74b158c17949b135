"""The webhook JWKS document served at ``GET /public/v1/discovery/webhooks/jwks``.

Format (PROTOCOL.md §9)::

    {"keys": [{"kid", "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
               "x": <base64url, no padding>, "turnkey_signature_algorithm": "ed25519",
               "turnkey_signature_version": "v1"}]}

served with :data:`CACHE_CONTROL`. Only public keys are ever written here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from infra.webhooks.signing import (
    SIGNATURE_ALGORITHM,
    SIGNATURE_VERSION,
    InvalidWebhookSignature,
    WebhookKeyRing,
)

JWKS_PATH = "/public/v1/discovery/webhooks/jwks"
CACHE_CONTROL = "public, max-age=86400, s-maxage=86400, stale-if-error=604800"
CONTENT_TYPE = "application/json"

_PUBLIC_KEY_BYTES = 32


def b64url(raw: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Inverse of :func:`b64url`; accepts missing padding."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwk(key_id: str, public_key: bytes) -> dict[str, str]:
    """One Ed25519 public key as a JWK with Turnkey's two extra members."""
    if len(public_key) != _PUBLIC_KEY_BYTES:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return {
        "kid": key_id,
        "kty": "OKP",
        "crv": "Ed25519",
        "alg": "EdDSA",
        "use": "sig",
        "x": b64url(public_key),
        "turnkey_signature_algorithm": SIGNATURE_ALGORITHM,
        "turnkey_signature_version": SIGNATURE_VERSION,
    }


def jwks_document(ring: WebhookKeyRing, *, now_ms: int) -> dict[str, list[dict[str, str]]]:
    """Every key published at ``now_ms``, newest activation first."""
    keys = sorted(ring.published(now_ms), key=lambda k: k.activates_at_ms, reverse=True)
    return {"keys": [jwk(k.key_id, k.public_key) for k in keys]}


def public_keys(document: Mapping[str, Any]) -> dict[str, bytes]:
    """``kid`` → raw public key for every usable Ed25519 key in a JWKS document.

    Entries with another key type, curve or signature version are skipped, as a receiver
    would skip them.

    Raises:
        InvalidWebhookSignature: The document is not a JWKS or an Ed25519 entry is corrupt.
    """
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise InvalidWebhookSignature("a JWKS document has a 'keys' list")
    found: dict[str, bytes] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if (entry.get("kty"), entry.get("crv")) != ("OKP", "Ed25519"):
            continue
        if entry.get("turnkey_signature_version", SIGNATURE_VERSION) != SIGNATURE_VERSION:
            continue
        try:
            raw = b64url_decode(str(entry["x"]))
        except (KeyError, ValueError, binascii.Error) as exc:
            raise InvalidWebhookSignature("malformed JWK") from exc
        if len(raw) != _PUBLIC_KEY_BYTES:
            raise InvalidWebhookSignature("malformed JWK")
        found[str(entry["kid"])] = raw
    return found
