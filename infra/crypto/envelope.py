"""EnvelopeCipher encryption of seeds and private keys at rest.

Each wallet or private key gets its own random 256-bit *data key*. The secret is encrypted
with the data key (AES-256-GCM); the data key is stored *wrapped* by the current master-key
version (AES-256-GCM). Both tokens carry a version prefix, and both bind a caller-chosen
``context`` (e.g. ``b"wallet:<id>"``) as associated data so a ciphertext moved to another
row fails to decrypt::

    wrapped data key:  "wk1.<master version>.<base64url(nonce ‖ ciphertext ‖ tag)>"
    secret:            "ed1.<base64url(nonce ‖ ciphertext ‖ tag)>"

Rotation (``walletd keys rotate``) adds a master version and calls :meth:`EnvelopeCipher.rewrap`
on every wrapped data key; the secrets themselves are not re-encrypted.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from infra.crypto.keyring import MasterKeyring
from infra.errors import InvalidCiphertext

WRAP_PREFIX = "wk1"
DATA_PREFIX = "ed1"
_WRAP_AAD = b"walletd/data-key/v1|"
_DATA_AAD = b"walletd/secret/v1|"
_NONCE = 12


@dataclass(frozen=True)
class SealedSecret:
    """What a row stores: the wrapped data key and the encrypted secret."""

    wrapped_key: str
    ciphertext: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _seal(key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(_NONCE)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def _open(key: bytes, blob: bytes, aad: bytes) -> bytes:
    try:
        return AESGCM(key).decrypt(blob[:_NONCE], blob[_NONCE:], aad)
    except (InvalidTag, ValueError):
        raise InvalidCiphertext("stored secret could not be decrypted") from None


def wrapped_key_version(wrapped_key: str) -> int:
    """The master-key version a wrapped data key was wrapped with.

    Raises:
        InvalidCiphertext: not a ``wk1.<version>.<…>`` token.
    """
    prefix, version, _ = _split_wrapped(wrapped_key)
    del prefix
    return version


def _split_wrapped(wrapped_key: str) -> tuple[str, int, bytes]:
    try:
        prefix, version, body = wrapped_key.split(".", 2)
        if prefix != WRAP_PREFIX:
            raise ValueError(prefix)
        return prefix, int(version), _unb64(body)
    except (ValueError, AttributeError, binascii.Error):
        raise InvalidCiphertext("malformed wrapped data key") from None


class EnvelopeCipher:
    """Wraps and unwraps data keys with a :class:`MasterKeyring`, and seals secrets."""

    def __init__(self, keyring: MasterKeyring) -> None:
        self.keyring = keyring

    # data keys ---------------------------------------------------------------------------

    def wrap_data_key(self, data_key_secret: bytes, context: bytes) -> str:
        """Wrap a data key under the current master version."""
        master = self.keyring.current_key()
        blob = _seal(master.key_secret, data_key_secret, _WRAP_AAD + context)
        return f"{WRAP_PREFIX}.{master.version}.{_b64(blob)}"

    def new_data_key(self, context: bytes) -> tuple[bytes, str]:
        """A fresh random data key and its wrapped form."""
        data_key_secret = AESGCM.generate_key(bit_length=256)
        return data_key_secret, self.wrap_data_key(data_key_secret, context)

    def unwrap_data_key(self, wrapped_key: str, context: bytes) -> bytes:
        """Unwrap with the version named in the token.

        Raises:
            KeyVersionRetired: the version was retired.
            UnknownKeyVersion: the keyring does not hold the version.
            InvalidCiphertext: tampered token or wrong context.
        """
        _, version, blob = _split_wrapped(wrapped_key)
        master = self.keyring.key_for_unwrap(version)
        return _open(master.key_secret, blob, _WRAP_AAD + context)

    def needs_rewrap(self, wrapped_key: str) -> bool:
        """Whether the token is wrapped under an older version than the current one."""
        return wrapped_key_version(wrapped_key) != self.keyring.current

    def rewrap(self, wrapped_key: str, context: bytes) -> str:
        """Re-wrap a data key under the current version (a no-op if it already is)."""
        if not self.needs_rewrap(wrapped_key):
            return wrapped_key
        return self.wrap_data_key(self.unwrap_data_key(wrapped_key, context), context)

    # secrets -----------------------------------------------------------------------------

    @staticmethod
    def encrypt(data_key_secret: bytes, plaintext_secret: bytes, context: bytes) -> str:
        """Encrypt a secret with a data key."""
        return (
            f"{DATA_PREFIX}.{_b64(_seal(data_key_secret, plaintext_secret, _DATA_AAD + context))}"
        )

    @staticmethod
    def decrypt(data_key_secret: bytes, ciphertext: str, context: bytes) -> bytes:
        """Decrypt a secret sealed by :meth:`encrypt`.

        Raises:
            InvalidCiphertext: malformed, tampered or wrong context.
        """
        prefix, _, body = ciphertext.partition(".")
        if prefix != DATA_PREFIX or not body:
            raise InvalidCiphertext("malformed stored secret")
        try:
            blob = _unb64(body)
        except (ValueError, binascii.Error):
            raise InvalidCiphertext("malformed stored secret") from None
        return _open(data_key_secret, blob, _DATA_AAD + context)

    def seal(self, plaintext_secret: bytes, context: bytes) -> SealedSecret:
        """Encrypt one secret under a fresh data key (one data key per wallet or key)."""
        data_key_secret, wrapped = self.new_data_key(context)
        return SealedSecret(wrapped, self.encrypt(data_key_secret, plaintext_secret, context))

    def open(self, sealed: SealedSecret, context: bytes) -> bytes:
        """Decrypt a :class:`SealedSecret`."""
        return self.decrypt(
            self.unwrap_data_key(sealed.wrapped_key, context), sealed.ciphertext, context
        )
