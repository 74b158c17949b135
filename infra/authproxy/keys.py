"""The auth proxy's own P-256 key, and the proxy user's API key sealed to it.

Enabling the proxy for an organization makes a P-256 API key for its proxy user. The
private half never rests in the clear: the worker that creates it seals it with HPKE
(Turnkey profile, ``infra.crypto.bundles.encrypt_to_bundle``) to the public half of the
proxy key, and only the proxy process, which holds the proxy key, opens it, for the one
request it signs.

The proxy key lives in the sealed keyring (:mod:`infra.seal`), created with it; the proxy
process unseals its own copy (auto-unseal types at start, shamir through ``walletd operator
unseal``). Its public half is in the keyring file's clear ``public`` section, so processes
that only seal or verify (workers, the API) read it there or take
``WALLETD_AUTH_PROXY_PUBLIC_KEY`` (uncompressed hex). Older deployments' plaintext
``auth-proxy-key.json`` (``WALLETD_AUTH_PROXY_KEY_FILE``) is imported by the seal.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from infra.crypto import hpke
from infra.crypto.bundles import encrypt_to_bundle, open_encrypted_bundle
from infra.errors import Unavailable
from infra.seal import sealed_file
from infra.seal.admin import AdminSocket
from infra.seal.state import SealState
from infra.seal.wiring import build_state
from infra.settings import Settings

SCHEME = "SIGNATURE_SCHEME_TK_API_P256"


def key_file(settings: Settings) -> Path:
    """Where older deployments kept the proxy key in clear (imported by the seal)."""
    return Path(settings.auth_proxy_key_file) if settings.auth_proxy_key_file else (
        settings.data_dir / "auth-proxy-key.json")


def published_public_key(settings: Settings) -> str | None:
    """The proxy key's public half (uncompressed hex) if the deployment has one yet."""
    if settings.auth_proxy_public_key:
        return hpke.uncompressed(hpke.load_public_key(settings.auth_proxy_public_key)).hex()
    try:
        sealed = sealed_file.read(settings.effective_keyring_file)
    except Unavailable:
        sealed = None
    if sealed is not None and sealed.public.get("auth_proxy_public_key"):
        return sealed.public["auth_proxy_public_key"]
    path = key_file(settings)
    if path.exists():  # not imported into the seal yet
        data = json.loads(path.read_text())
        if isinstance(data, dict) and isinstance(data.get("publicKey"), str):
            return str(data["publicKey"])
    return None


def public_key(settings: Settings) -> str:
    """The proxy key's public half (uncompressed hex).

    Raises:
        Unavailable: neither ``WALLETD_AUTH_PROXY_PUBLIC_KEY`` nor a sealed keyring is there.
    """
    public = published_public_key(settings)
    if public is None:
        raise Unavailable("the auth proxy key is not configured: initialise the seal "
                          "(`walletd operator init`, or start `walletd up` once) or set "
                          "WALLETD_AUTH_PROXY_PUBLIC_KEY")
    return public


def compressed_public_key(settings: Settings) -> str:
    """The proxy key's public half as a stamp carries it (compressed hex)."""
    return hpke.compressed(hpke.load_public_key(public_key(settings))).hex()


class ProxyKey:
    """The proxy key's private half, held by the proxy process only, from its seal."""

    def __init__(self, private: ec.EllipticCurvePrivateKey | None = None,
                 state: SealState | None = None) -> None:
        self._private = private
        self._state = state
        self._source: dict[str, str] | None = None
        self._admin: AdminSocket | None = None

    @classmethod
    def load(cls, settings: Settings, state: SealState | None = None) -> ProxyKey:
        """The proxy key of this process's seal (``walletd up`` passes its own; the proxy
        process builds one, with its admin socket for ``walletd operator unseal``)."""
        admin = None
        if state is None:
            state = build_state(settings, label="auth-proxy")
            with contextlib.suppress(OSError):  # no socket: unsealed by auto seals only
                admin = AdminSocket(state, state.config.socket_dir)
            state.start()
        key = cls(state=state)
        key._admin = admin
        return key

    def private(self) -> ec.EllipticCurvePrivateKey:
        """The private key (``Sealed`` while this process is sealed)."""
        if self._state is None:
            if self._private is None:
                raise Unavailable("the auth proxy has no key")
            return self._private
        record = self._state.contents().auth_proxy
        if record is not self._source or self._private is None:
            if not record.get("privateKey"):
                raise Unavailable("the sealed keyring holds no auth proxy key")
            self._private = hpke.private_key_from_bytes(bytes.fromhex(record["privateKey"]))
            self._source = record
        return self._private

    @property
    def public_key(self) -> str:
        return hpke.compressed(self.private().public_key()).hex()

    def stamp(self, body: bytes) -> str:
        """An ``X-Stamp`` value over ``body`` made with the proxy key."""
        return stamp_with(self.private(), body)

    @contextmanager
    def api_key(self, sealed: str) -> Iterator[ec.EllipticCurvePrivateKey]:
        """The proxy user's API key, opened for the duration of the ``with`` block."""
        raw = bytearray(open_encrypted_bundle(sealed, self.private()))
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
