"""Raw payload signing (``sign_raw_payload(s)``), PROTOCOL.md §3.6 and CRYPTO.md §3.

Pipeline: decode the payload per ``encoding`` → hash per ``hashFunction`` → sign.

* secp256k1: recoverable ECDSA over a 32-byte digest (coincurve/libsecp256k1: RFC 6979,
  low-S). Result ``r``/``s`` are 64 lower-case hex chars without ``0x``; ``v`` is the
  recovery id ``"00"``/``"01"``. When the signer is a Bitcoin P2TR account the digest is
  signed with BIP-340 Schnorr under the BIP-341 key-path tweak instead (CRYPTO.md §3).
* ed25519: PureEdDSA over the payload bytes themselves (PyNaCl); ``r``/``s`` are the two
  32-byte halves and ``v`` is ``"00"``.
* EIP-712: the payload is typed-data JSON; the digest ``keccak(0x1901‖domain‖struct)`` comes
  from eth-account's ``encode_typed_data`` (CRYPTO.md §1).

Every invalid combination raises :class:`InvalidRequest` saying what to send instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import coincurve
import nacl.signing
from eth_utils import keccak

from infra.crypto.addresses import AddressFormat, Curve
from infra.errors import InvalidRequest

SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


class PayloadEncoding(StrEnum):
    """The ``v1PayloadEncoding`` wire enum."""

    HEXADECIMAL = "PAYLOAD_ENCODING_HEXADECIMAL"
    TEXT_UTF8 = "PAYLOAD_ENCODING_TEXT_UTF8"
    EIP712 = "PAYLOAD_ENCODING_EIP712"
    EIP7702_AUTHORIZATION = "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION"


class HashFunction(StrEnum):
    """The ``v1HashFunction`` wire enum."""

    NO_OP = "HASH_FUNCTION_NO_OP"
    SHA256 = "HASH_FUNCTION_SHA256"
    KECCAK256 = "HASH_FUNCTION_KECCAK256"
    NOT_APPLICABLE = "HASH_FUNCTION_NOT_APPLICABLE"


@dataclass(frozen=True)
class Signature:
    """A ``signRawPayloadResult``: hex strings without ``0x``."""

    r: str
    s: str
    v: str

    def to_wire(self) -> dict[str, str]:
        """The ``{r, s, v}`` JSON object."""
        return {"r": self.r, "s": self.s, "v": self.v}


def parse_encoding(value: str) -> PayloadEncoding:
    """Parse ``encoding``; unknown values name the accepted ones."""
    try:
        return PayloadEncoding(value)
    except ValueError:
        raise InvalidRequest(
            f"unknown encoding {value!r}; send PAYLOAD_ENCODING_HEXADECIMAL, "
            "PAYLOAD_ENCODING_TEXT_UTF8 or PAYLOAD_ENCODING_EIP712",
            field="encoding",
        ) from None


def parse_hash_function(value: str) -> HashFunction:
    """Parse ``hashFunction``; unknown values name the accepted ones."""
    try:
        return HashFunction(value)
    except ValueError:
        raise InvalidRequest(
            f"unknown hashFunction {value!r}; send HASH_FUNCTION_NO_OP, HASH_FUNCTION_SHA256, "
            "HASH_FUNCTION_KECCAK256 or HASH_FUNCTION_NOT_APPLICABLE",
            field="hashFunction",
        ) from None


# --- decoding --------------------------------------------------------------------------


def decode_hex(payload: str, *, field: str = "payload") -> bytes:
    """Decode hex with an optional ``0x`` prefix.

    Raises:
        InvalidRequest: for non-hex characters or an odd number of digits.
    """
    if not isinstance(payload, str):
        raise InvalidRequest(f"{field} must be a hex string", field=field)
    text = payload[2:] if payload[:2] in ("0x", "0X") else payload
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise InvalidRequest(
            f"{field} is not valid hex with PAYLOAD_ENCODING_HEXADECIMAL; send an even number "
            "of hex digits (optionally 0x-prefixed) or use PAYLOAD_ENCODING_TEXT_UTF8",
            field=field,
        ) from None


def eip712_digest(payload: str | dict[str, Any]) -> bytes:
    """The EIP-712 signing digest of typed-data JSON (eth-account).

    Raises:
        InvalidRequest: when the payload is not valid EIP-712 typed data.
    """
    # Imported on first use: eth-account costs about half a second at every process start,
    # and only EIP-712 payloads need it (infra/__init__ has already tamed py_ecc's import).
    from eth_account.messages import encode_typed_data

    try:
        message = json.loads(payload) if isinstance(payload, str) else payload
        if not isinstance(message, dict):
            raise TypeError("typed data must be a JSON object")
        signable = encode_typed_data(full_message=message)
    except Exception as ex:  # eth-account raises many types for malformed input
        raise InvalidRequest(
            "payload is not valid EIP-712 typed data; send the JSON object "
            '{"types": {...,"EIP712Domain": [...]}, "primaryType": ..., "domain": {...}, '
            '"message": {...}} with PAYLOAD_ENCODING_EIP712',
            field="payload",
        ) from ex
    return bytes(keccak(b"\x19" + signable.version + signable.header + signable.body))


def _decode(payload: str, encoding: PayloadEncoding) -> bytes:
    if encoding is PayloadEncoding.HEXADECIMAL:
        return decode_hex(payload)
    if encoding is PayloadEncoding.TEXT_UTF8:
        if not isinstance(payload, str):
            raise InvalidRequest("payload must be a string", field="payload")
        return payload.encode("utf-8")
    raise InvalidRequest(
        f"{encoding.value} is not supported; send PAYLOAD_ENCODING_HEXADECIMAL, "
        "PAYLOAD_ENCODING_TEXT_UTF8 or PAYLOAD_ENCODING_EIP712",
        field="encoding",
    )


# --- message preparation --------------------------------------------------------------


def prepare_message(
    curve: Curve, payload: str, encoding: str | PayloadEncoding, hash_function: str | HashFunction
) -> bytes:
    """Decode and hash ``payload``: the exact bytes the curve's signer will sign.

    secp256k1 gets a 32-byte digest; ed25519 gets the raw payload bytes.

    Raises:
        InvalidRequest: for every unsupported or inconsistent combination.
    """
    enc = encoding if isinstance(encoding, PayloadEncoding) else parse_encoding(encoding)
    hf = (
        hash_function
        if isinstance(hash_function, HashFunction)
        else parse_hash_function(hash_function)
    )
    if curve is Curve.ED25519:
        return _prepare_ed25519(payload, enc, hf)
    if curve is Curve.SECP256K1:
        return _prepare_secp256k1(payload, enc, hf)
    raise InvalidRequest(
        f"raw payload signing supports CURVE_SECP256K1 and CURVE_ED25519 keys, not {curve.value}",
        field="signWith",
    )


def _prepare_ed25519(payload: str, enc: PayloadEncoding, hf: HashFunction) -> bytes:
    if enc is PayloadEncoding.EIP712:
        raise InvalidRequest(
            "PAYLOAD_ENCODING_EIP712 needs a secp256k1 (Ethereum) signer; for ed25519 send "
            "PAYLOAD_ENCODING_HEXADECIMAL or PAYLOAD_ENCODING_TEXT_UTF8",
            field="encoding",
        )
    if hf not in (HashFunction.NOT_APPLICABLE, HashFunction.NO_OP):
        raise InvalidRequest(
            f"ed25519 signs the message itself, so {hf.value} does not apply; send "
            "HASH_FUNCTION_NOT_APPLICABLE",
            field="hashFunction",
        )
    return _decode(payload, enc)


def _prepare_secp256k1(payload: str, enc: PayloadEncoding, hf: HashFunction) -> bytes:
    # EIP-712 first: its only hash is keccak256, so the message must not suggest SHA256.
    if enc is PayloadEncoding.EIP712:
        if hf not in (HashFunction.NO_OP, HashFunction.KECCAK256):
            raise InvalidRequest(
                f"PAYLOAD_ENCODING_EIP712 is hashed per EIP-712 (keccak256), so {hf.value} "
                "does not apply; send HASH_FUNCTION_KECCAK256 or HASH_FUNCTION_NO_OP",
                field="hashFunction",
            )
        return eip712_digest(payload)
    if hf is HashFunction.NOT_APPLICABLE:
        raise InvalidRequest(
            "HASH_FUNCTION_NOT_APPLICABLE is for ed25519 signers; a secp256k1 signer needs "
            "HASH_FUNCTION_KECCAK256, HASH_FUNCTION_SHA256, or HASH_FUNCTION_NO_OP with a "
            "32-byte digest",
            field="hashFunction",
        )
    data = _decode(payload, enc)
    if hf is HashFunction.SHA256:
        return hashlib.sha256(data).digest()
    if hf is HashFunction.KECCAK256:
        return bytes(keccak(data))
    if len(data) != 32:
        raise InvalidRequest(
            f"HASH_FUNCTION_NO_OP signs a 32-byte digest but the payload is {len(data)} bytes; "
            "send a 32-byte hex digest or choose HASH_FUNCTION_KECCAK256 / HASH_FUNCTION_SHA256",
            field="payload",
        )
    return data


# --- signing ---------------------------------------------------------------------------


def sign_secp256k1(private_key_secret: bytes, digest: bytes) -> Signature:
    """Recoverable low-S ECDSA over a 32-byte digest."""
    raw = coincurve.PrivateKey(private_key_secret).sign_recoverable(digest, hasher=None)
    return Signature(r=raw[:32].hex(), s=raw[32:64].hex(), v=f"{raw[64]:02x}")


def taproot_tweaked_private_key(private_key_secret: bytes) -> bytes:
    """BIP-341 key-path tweak with an empty script tree (BIP-86)."""
    key = coincurve.PrivateKey(private_key_secret)
    compressed = key.public_key.format(compressed=True)
    secret = int.from_bytes(private_key_secret, "big")
    if compressed[0] == 0x03:  # odd Y: negate so the x-only key has even Y
        secret = SECP256K1_ORDER - secret
    tag = hashlib.sha256(b"TapTweak").digest()
    tweak = int.from_bytes(hashlib.sha256(tag + tag + compressed[1:]).digest(), "big")
    if tweak >= SECP256K1_ORDER:  # pragma: no cover - probability ~2^-128
        raise InvalidRequest("taproot tweak out of range")
    return ((secret + tweak) % SECP256K1_ORDER).to_bytes(32, "big")


def sign_schnorr_taproot(private_key_secret: bytes, digest: bytes) -> Signature:
    """BIP-340 Schnorr over a 32-byte digest with the BIP-341 tweaked key."""
    tweaked = coincurve.PrivateKey(taproot_tweaked_private_key(private_key_secret))
    raw = tweaked.sign_schnorr(digest, os.urandom(32))
    return Signature(r=raw[:32].hex(), s=raw[32:].hex(), v="00")


def sign_ed25519(private_key_secret: bytes, message: bytes) -> Signature:
    """Ed25519 over the message bytes; ``r``/``s`` are the signature halves."""
    raw = nacl.signing.SigningKey(private_key_secret).sign(message).signature
    return Signature(r=raw[:32].hex(), s=raw[32:].hex(), v="00")


_P2TR = frozenset(f for f in AddressFormat if f.value.endswith("_P2TR"))


def sign_raw_payload(
    curve: Curve,
    private_key_secret: bytes,
    payload: str,
    encoding: str | PayloadEncoding,
    hash_function: str | HashFunction,
    *,
    address_format: AddressFormat | None = None,
) -> Signature:
    """Sign one raw payload the way ``ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2`` does.

    Args:
        curve: the signer's curve.
        private_key_secret: 32-byte secp256k1 scalar or ed25519 seed.
        payload: the payload string as sent on the wire.
        encoding: ``PAYLOAD_ENCODING_*``.
        hash_function: ``HASH_FUNCTION_*``.
        address_format: the signer account's format; Bitcoin P2TR accounts sign Schnorr.

    Raises:
        InvalidRequest: for any invalid payload / encoding / hash combination.
    """
    message = prepare_message(curve, payload, encoding, hash_function)
    if curve is Curve.ED25519:
        return sign_ed25519(private_key_secret, message)
    if address_format in _P2TR:
        return sign_schnorr_taproot(private_key_secret, message)
    return sign_secp256k1(private_key_secret, message)


# --- standalone keys -------------------------------------------------------------------


def generate_private_key(curve: Curve) -> bytes:
    """A fresh private key (secp256k1 scalar or ed25519 seed) for ``create_private_keys``."""
    if curve is Curve.SECP256K1:
        return bytes(coincurve.PrivateKey().secret)
    if curve is Curve.ED25519:
        return bytes(nacl.signing.SigningKey.generate())
    raise InvalidRequest(
        f"private keys support CURVE_SECP256K1 and CURVE_ED25519, not {curve.value}",
        field="curve",
    )


def public_key_from_private(curve: Curve, private_key_secret: bytes) -> bytes:
    """Compressed secp256k1 (33 B) or ed25519 (32 B) public key of a private key.

    Raises:
        InvalidRequest: for a key that is not valid on ``curve``.
    """
    if len(private_key_secret) != 32:
        raise InvalidRequest("a private key is 32 bytes", field="privateKey")
    try:
        if curve is Curve.SECP256K1:
            return bytes(coincurve.PrivateKey(private_key_secret).public_key.format(True))
        if curve is Curve.ED25519:
            return bytes(nacl.signing.SigningKey(private_key_secret).verify_key)
    except ValueError as ex:
        raise InvalidRequest("the private key is not valid for this curve") from ex
    raise InvalidRequest(
        f"private keys support CURVE_SECP256K1 and CURVE_ED25519, not {curve.value}",
        field="curve",
    )
