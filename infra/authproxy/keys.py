"""The auth proxy's own P-256 key, and the proxy user's API key sealed to it.

Enabling the proxy for an organization makes a P-256 API key for its proxy user. The
private half never rests in the clear: the worker that creates it seals it with HPKE
(Turnkey profile, ``infra.crypto.bundles.encrypt_to_bundle``) to the public half of the
proxy key, and only the proxy process, which holds the proxy key, opens it, for the one
request it signs.

The proxy key lives in ``WALLETD_AUTH_PROXY_KEY_FILE`` (default
``<data dir>/auth-proxy-key.json``, mode 0600): ``{"privateKey": hex, "publicKey": hex}``.
Processes that only seal or verify (workers, the API) read ``publicKey`` from that file or
take ``WALLETD_AUTH_PROXY_PUBLIC_KEY`` (uncompressed hex), so a production API host needs
no copy of the private half.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from infra.crypto import hpke
from infra.crypto.bundles import encrypt_to_bundle, open_encrypted_bundle
from infra.errors import Unavailable
from infra.settings import Settings

SCHEME = "SIGNATURE_SCHEME_TK_API_P256"


def key_file(settings: Settings) -> Path:
    """Where the proxy key lives."""
    return Path(settings.auth_proxy_key_file) if settings.auth_proxy_key_file else (
        settings.data_dir / "auth-proxy-key.json")


def ensure_key_file(settings: Settings) -> str:
    """Create the proxy key file when missing; return its public half (uncompressed hex)."""
    path = key_file(settings)
    if path.exists():
        return _read(path)["publicKey"]
    private = hpke.generate_private_key()
    record = {"privateKey": hpke.private_key_to_bytes(private).hex(),
              "publicKey": hpke.uncompressed(private.public_key()).hex()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(record, indent=2) + "\n")
    return record["publicKey"]


def _read(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("publicKey"), str):
        raise Unavailable(f"the auth proxy key file {path} is not valid; delete it and restart")
    return data


def public_key(settings: Settings) -> str:
    """The proxy key's public half (uncompressed hex).

    Raises:
        Unavailable: neither ``WALLETD_AUTH_PROXY_PUBLIC_KEY`` nor a key file is there.
    """
    if settings.auth_proxy_public_key:
        return hpke.uncompressed(hpke.load_public_key(settings.auth_proxy_public_key)).hex()
    path = key_file(settings)
    if not path.exists():
        raise Unavailable("the auth proxy key is not configured: start `walletd auth-proxy` once "
                          "(it creates the key file) or set WALLETD_AUTH_PROXY_PUBLIC_KEY")
    return _read(path)["publicKey"]


def compressed_public_key(settings: Settings) -> str:
    """The proxy key's public half as a stamp carries it (compressed hex)."""
    return hpke.compressed(hpke.load_public_key(public_key(settings))).hex()


class ProxyKey:
    """The proxy key's private half, held by the proxy process only."""

    def __init__(self, private: ec.EllipticCurvePrivateKey) -> None:
        self._private = private
        self.public_key = hpke.compressed(private.public_key()).hex()

    @classmethod
    def load(cls, settings: Settings) -> ProxyKey:
        """Load (creating it on first start) the key file."""
        ensure_key_file(settings)
        data = _read(key_file(settings))
        return cls(hpke.private_key_from_bytes(bytes.fromhex(data["privateKey"])))

    def stamp(self, body: bytes) -> str:
        """An ``X-Stamp`` value over ``body`` made with the proxy key."""
        return stamp_with(self._private, body)

    @contextmanager
    def api_key(self, sealed: str) -> Iterator[ec.EllipticCurvePrivateKey]:
        """The proxy user's API key, opened for the duration of the ``with`` block."""
        raw = bytearray(open_encrypted_bundle(sealed, self._private))
        try:
            yield hpke.private_key_from_bytes(bytes(raw))
        finally:
            raw[:] = bytes(len(raw))


def seal_api_key(private_key: ec.EllipticCurvePrivateKey, proxy_public_key: str) -> str:
    """Seal an API key's private half to the proxy key (``encryptedBundle`` JSON)."""
    return encrypt_to_bundle(hpke.private_key_to_bytes(private_key), proxy_public_key)


def stamp_with(private: ec.EllipticCurvePrivateKey, body: bytes) -> str:
    """An ``X-Stamp`` header value (PROTOCOL.md §1) over ``body``."""
    stamp = {"publicKey": hpke.compressed(private.public_key()).hex(), "scheme": SCHEME,
             "signature": private.sign(body, ec.ECDSA(hashes.SHA256())).hex()}
    return base64.urlsafe_b64encode(json.dumps(stamp).encode()).decode().rstrip("=")
