"""Messages encrypted to a P-256 "quorum key" (QOS ``qos_p256`` encryption).

What ``@turnkey/crypto``'s ``encryptOauth2ClientSecret`` (``quorumKeyEncrypt``) produces and
``create_oauth2_credential`` receives as ``encryptedClientSecret``: hex of a borsh-serialised
envelope::

    nonce (12 bytes) ‖ ephemeral sender public key (65 bytes, uncompressed)
      ‖ u32 little-endian length ‖ AES-256-GCM ciphertext ‖ tag (16 bytes)

The AES key is the first 32 bytes of HMAC-SHA512 keyed with ``sender_pub ‖ receiver_pub ‖
ECDH x-coordinate`` over the message ``qos_encryption_hmac_message``; the associated data is
``sender_pub ‖ len(sender_pub) ‖ receiver_pub ‖ len(receiver_pub)`` (one byte each).
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import os
import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from infra.crypto import hpke
from infra.errors import InvalidRequest

HMAC_MESSAGE = b"qos_encryption_hmac_message"
NONCE_LENGTH = 12
PUBLIC_KEY_LENGTH = 65
_HEADER = NONCE_LENGTH + PUBLIC_KEY_LENGTH + 4
#: Longest message accepted (client secrets are short; this bounds the work on bad input).
MAX_MESSAGE_LENGTH = 4096


class QuorumDecryptError(ValueError):
    """The envelope is malformed or does not open with the key."""


def _cipher(sender_public: bytes, receiver_public: bytes, shared_x: bytes) -> AESGCM:
    mac = hmac.new(sender_public + receiver_public + shared_x, HMAC_MESSAGE, hashlib.sha512).digest()
    return AESGCM(mac[:32])


def _aad(sender_public: bytes, receiver_public: bytes) -> bytes:
    return (sender_public + bytes([len(sender_public)])
            + receiver_public + bytes([len(receiver_public)]))


def encrypt(receiver_public: ec.EllipticCurvePublicKey, message: bytes) -> str:
    """Encrypt ``message`` to ``receiver_public``; returns the envelope as hex."""
    ephemeral = hpke.generate_private_key()
    sender_public = hpke.uncompressed(ephemeral.public_key())
    receiver = hpke.uncompressed(receiver_public)
    shared_x = ephemeral.exchange(ec.ECDH(), receiver_public)
    nonce = os.urandom(NONCE_LENGTH)
    sealed = _cipher(sender_public, receiver, shared_x).encrypt(
        nonce, message, _aad(sender_public, receiver))
    return (nonce + sender_public + struct.pack("<I", len(sealed)) + sealed).hex()


def decrypt(receiver: ec.EllipticCurvePrivateKey, envelope_hex: str) -> bytes:
    """Open an envelope made for ``receiver``.

    Raises:
        QuorumDecryptError: not hex, wrong layout, or the key does not open it.
    """
    try:
        raw = bytes.fromhex(envelope_hex.strip())
    except (ValueError, binascii.Error) as ex:
        raise QuorumDecryptError("the envelope is not hex") from ex
    if len(raw) < _HEADER + 16:
        raise QuorumDecryptError("the envelope is too short")
    nonce = raw[:NONCE_LENGTH]
    sender_public = raw[NONCE_LENGTH:NONCE_LENGTH + PUBLIC_KEY_LENGTH]
    (length,) = struct.unpack("<I", raw[NONCE_LENGTH + PUBLIC_KEY_LENGTH:_HEADER])
    sealed = raw[_HEADER:]
    if length != len(sealed) or length > MAX_MESSAGE_LENGTH + 16:
        raise QuorumDecryptError("the envelope's length field does not match its ciphertext")
    try:
        sender = hpke.load_public_key(sender_public)
    except InvalidRequest as ex:
        raise QuorumDecryptError("the envelope's sender key is not a P-256 point") from ex
    receiver_public = hpke.uncompressed(receiver.public_key())
    shared_x = receiver.exchange(ec.ECDH(), sender)
    try:
        return _cipher(sender_public, receiver_public, shared_x).decrypt(
            nonce, sealed, _aad(sender_public, receiver_public))
    except InvalidTag as ex:
        raise QuorumDecryptError("the envelope does not open with this key") from ex
