"""Import/export bundle formats (PROTOCOL.md §5.3, §5.4).

Signed wrapper (``importBundle`` and ``exportBundle``)::

    {"version": "v1.0.0", "data": "<hex of UTF-8 JSON>",
     "dataSignature": "<DER hex, ECDSA-P256-SHA256 over the data bytes>",
     "enclaveQuorumPublic": "<uncompressed P-256 hex of the service signer>"}

* import ``data`` = ``{"organizationId", "userId", "targetPublic"}``;
* export ``data`` = ``{"organizationId", "encappedPublic", "ciphertext"}``.

The caller's ``encryptedBundle`` (``import_wallet``) is ``{"encappedPublic", "ciphertext"}``
sealed to the import target key; a wallet plaintext may carry a BIP-39 passphrase as
``mnemonic + "\\n--PASS--\\n" + passphrase``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature as _CryptoInvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from infra.crypto import hpke
from infra.errors import InvalidCiphertext, InvalidRequest, InvalidSignature

BUNDLE_VERSION = "v1.0.0"
PASSPHRASE_SEPARATOR = "\n--PASS--\n"


@dataclass(frozen=True)
class ServiceSigner:
    """The service's P-256 signer key (Turnkey's "enclave quorum" key)."""

    private_key: ec.EllipticCurvePrivateKey

    @classmethod
    def from_bytes(cls, private_key_secret: bytes) -> ServiceSigner:
        """Load from the 32-byte scalar."""
        return cls(hpke.private_key_from_bytes(private_key_secret))

    @classmethod
    def generate(cls) -> ServiceSigner:
        """A fresh signer (tests, first start)."""
        return cls(hpke.generate_private_key())

    @property
    def public_key_hex(self) -> str:
        """Uncompressed P-256 hex, as published at ``/public/v1/discovery/keys``."""
        return hpke.uncompressed(self.private_key.public_key()).hex()

    def sign(self, data: bytes) -> bytes:
        """DER ECDSA-P256-SHA256 signature over ``data``."""
        return self.private_key.sign(data, ec.ECDSA(hashes.SHA256()))


def _json(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def build_signed_bundle(signer: ServiceSigner, data: dict[str, Any]) -> str:
    """Wrap ``data`` in the signed v1.0.0 bundle JSON string."""
    data_bytes = _json(data)
    return json.dumps(
        {
            "version": BUNDLE_VERSION,
            "data": data_bytes.hex(),
            "dataSignature": signer.sign(data_bytes).hex(),
            "enclaveQuorumPublic": signer.public_key_hex,
        }
    )


def verify_signed_bundle(bundle: str, signer_public_key_hex: str) -> dict[str, Any]:
    """Client-side check of a signed bundle (what ``@turnkey/crypto`` does); returns ``data``.

    Raises:
        InvalidSignature: wrong signer key or bad signature.
        InvalidRequest: malformed bundle.
    """
    try:
        wrapper = json.loads(bundle)
        data_bytes = bytes.fromhex(wrapper["data"])
        signature = bytes.fromhex(wrapper["dataSignature"])
        signer_hex = str(wrapper["enclaveQuorumPublic"])
    except (ValueError, KeyError, TypeError):
        raise InvalidRequest("malformed signed bundle") from None
    if signer_hex.lower() != signer_public_key_hex.lower():
        raise InvalidSignature("bundle signer does not match the expected signer key")
    public_key = hpke.load_public_key(signer_hex)
    try:
        public_key.verify(signature, data_bytes, ec.ECDSA(hashes.SHA256()))
    except _CryptoInvalidSignature:
        raise InvalidSignature("bundle signature does not verify") from None
    data = json.loads(data_bytes)
    if not isinstance(data, dict):
        raise InvalidRequest("malformed signed bundle")
    return data


# --- import -------------------------------------------------------------------------------


def build_import_bundle(
    signer: ServiceSigner, *, organization_id: str, user_id: str, target_public_key: bytes
) -> str:
    """The ``importBundle`` of ``init_import_wallet`` / ``init_import_private_key``.

    Args:
        target_public_key: the P-256 import target key the service holds (any SEC1 form).
    """
    target = hpke.uncompressed(hpke.load_public_key(target_public_key)).hex()
    return build_signed_bundle(
        signer,
        {"organizationId": organization_id, "userId": user_id, "targetPublic": target},
    )


def encrypt_to_bundle(plaintext: bytes, target_public_key: bytes | str) -> str:
    """Client side of import (``encryptWalletToBundle``): the ``encryptedBundle`` JSON."""
    sealed = hpke.seal(plaintext, target_public_key)
    return json.dumps(
        {"encappedPublic": sealed.encapped_public.hex(), "ciphertext": sealed.ciphertext.hex()}
    )


def open_encrypted_bundle(
    encrypted_bundle: str, target_private_key: ec.EllipticCurvePrivateKey
) -> bytes:
    """Decrypt an ``encryptedBundle`` sealed to the import target key.

    Raises:
        InvalidCiphertext: malformed JSON/hex or failed decryption (no detail either way).
    """
    try:
        parsed = json.loads(encrypted_bundle)
        enc = bytes.fromhex(parsed["encappedPublic"])
        ciphertext = bytes.fromhex(parsed["ciphertext"])
    except (ValueError, KeyError, TypeError):
        raise InvalidCiphertext(
            'encryptedBundle must be the JSON {"encappedPublic": hex, "ciphertext": hex} '
            "produced by encryptWalletToBundle"
        ) from None
    return hpke.open_sealed(enc, ciphertext, target_private_key)


def split_wallet_plaintext(plaintext: bytes) -> tuple[str, str]:
    """Split an imported wallet plaintext into ``(mnemonic, passphrase)``.

    Raises:
        InvalidRequest: ``invalid mnemonic`` when the plaintext is not UTF-8 text.
    """
    try:
        text = plaintext.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidRequest(
            "invalid mnemonic: the decrypted bundle is not UTF-8 text", field="encryptedBundle"
        ) from None
    mnemonic_secret, _, passphrase_secret = text.partition(PASSPHRASE_SEPARATOR)
    return mnemonic_secret.strip(), passphrase_secret


def join_wallet_plaintext(mnemonic_secret: str, passphrase_secret: str = "") -> bytes:
    """Inverse of :func:`split_wallet_plaintext`."""
    if passphrase_secret:
        return (mnemonic_secret + PASSPHRASE_SEPARATOR + passphrase_secret).encode("utf-8")
    return mnemonic_secret.encode("utf-8")


# --- export -------------------------------------------------------------------------------


def build_export_bundle(
    signer: ServiceSigner, *, organization_id: str, plaintext: bytes, target_public_key: str
) -> str:
    """The ``exportBundle`` of ``export_wallet`` / ``export_private_key``.

    Args:
        plaintext: mnemonic UTF-8 bytes or a 32-byte private key.
        target_public_key: the caller's P-256 key (hex, compressed or uncompressed).

    Raises:
        InvalidRequest: when ``target_public_key`` is not a P-256 key.
    """
    sealed = hpke.seal(plaintext, target_public_key)
    return build_signed_bundle(
        signer,
        {
            "organizationId": organization_id,
            "encappedPublic": sealed.encapped_public.hex(),
            "ciphertext": sealed.ciphertext.hex(),
        },
    )


def open_export_bundle(
    export_bundle: str,
    embedded_private_key: ec.EllipticCurvePrivateKey,
    *,
    signer_public_key_hex: str,
    organization_id: str,
) -> bytes:
    """Client side of export (``decryptExportBundle``): verify, check org, decrypt.

    Raises:
        InvalidSignature, InvalidRequest, InvalidCiphertext.
    """
    data = verify_signed_bundle(export_bundle, signer_public_key_hex)
    if data.get("organizationId") != organization_id:
        raise InvalidRequest("export bundle is for another organization")
    try:
        enc = bytes.fromhex(data["encappedPublic"])
        ciphertext = bytes.fromhex(data["ciphertext"])
    except (ValueError, KeyError, TypeError):
        raise InvalidCiphertext("malformed export bundle") from None
    return hpke.open_sealed(enc, ciphertext, embedded_private_key)
