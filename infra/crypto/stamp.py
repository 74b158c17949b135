"""Signature checks for API-key stamps (X-Stamp).

Verification raises :class:`infra.errors.InvalidSignature`; it never returns a bool.
ECDSA signatures are parsed leniently (non-minimal DER integers, long-form lengths) and
high-S values are accepted, because official clients produce both (PROTOCOL.md §1.3).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from cryptography.exceptions import InvalidSignature as _CryptoInvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from infra.errors import InvalidSignature

SCHEME_P256: Final = "SIGNATURE_SCHEME_TK_API_P256"
SCHEME_SECP256K1: Final = "SIGNATURE_SCHEME_TK_API_SECP256K1"
SCHEME_ED25519: Final = "SIGNATURE_SCHEME_TK_API_ED25519"

#: Which API key curve each scheme is verified with.
CURVE_OF_SCHEME: Final = {
    SCHEME_P256: "API_KEY_CURVE_P256",
    SCHEME_SECP256K1: "API_KEY_CURVE_SECP256K1",
    SCHEME_ED25519: "API_KEY_CURVE_ED25519",
}

_BAD = "could not verify api key signature"


def _read_length(der: bytes, pos: int) -> tuple[int, int]:
    first = der[pos]
    pos += 1
    if first < 0x80:
        return first, pos
    count = first & 0x7F
    if count == 0 or count > 4:
        raise ValueError("bad DER length")
    return int.from_bytes(der[pos : pos + count], "big"), pos + count


def parse_der_signature(der: bytes) -> tuple[int, int]:
    """Parse an ECDSA DER signature leniently into ``(r, s)``.

    Raises:
        ValueError: The bytes are not a SEQUENCE of two INTEGERs.
    """
    if len(der) < 8 or der[0] != 0x30:
        raise ValueError("not a DER sequence")
    _, pos = _read_length(der, 1)
    values = []
    for _ in range(2):
        if pos >= len(der) or der[pos] != 0x02:
            raise ValueError("expected DER integer")
        length, pos = _read_length(der, pos + 1)
        if length == 0 or pos + length > len(der):
            raise ValueError("bad DER integer length")
        values.append(int.from_bytes(der[pos : pos + length], "big"))
        pos += length
    return values[0], values[1]


@lru_cache(maxsize=4096)
def _ec_key(curve_name: str, public_key_hex: str) -> ec.EllipticCurvePublicKey:
    curve: ec.EllipticCurve = ec.SECP256R1() if curve_name == "p256" else ec.SECP256K1()
    return ec.EllipticCurvePublicKey.from_encoded_point(curve, bytes.fromhex(public_key_hex))


@lru_cache(maxsize=4096)
def _ed_key(public_key_hex: str) -> ed25519.Ed25519PublicKey:
    return ed25519.Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))


def verify_stamp_signature(scheme: str, public_key_hex: str, signature_hex: str, message: bytes) -> None:
    """Verify an X-Stamp signature over the raw request body.

    Args:
        scheme: ``SIGNATURE_SCHEME_TK_API_*``.
        public_key_hex: The key as stored (compressed SEC1 hex, or 32-byte Ed25519 hex).
        signature_hex: DER hex for ECDSA schemes, raw 64-byte hex for Ed25519.
        message: The exact body bytes that were signed.

    Raises:
        InvalidSignature: The signature does not verify or cannot be parsed.
    """
    try:
        signature = bytes.fromhex(signature_hex)
        if scheme == SCHEME_ED25519:
            _ed_key(public_key_hex.lower()).verify(signature, message)
            return
        if scheme in (SCHEME_P256, SCHEME_SECP256K1):
            r, s = parse_der_signature(signature)
            curve = "p256" if scheme == SCHEME_P256 else "k1"
            key = _ec_key(curve, public_key_hex.lower())
            key.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
            return
    except (ValueError, TypeError, _CryptoInvalidSignature) as ex:
        raise InvalidSignature(_BAD) from ex
    raise InvalidSignature(f"unsupported stamp scheme {scheme!r}")


def normalize_public_key(curve: str, public_key_hex: str) -> str:
    """Validate an API public key for ``curve`` and return its canonical hex.

    P-256 and secp256k1 keys are stored compressed (what clients stamp with); Ed25519 keys
    are 32 raw bytes.

    Raises:
        ValueError: The key is not a valid point/key of that curve.
    """
    raw = bytes.fromhex(public_key_hex.removeprefix("0x"))
    if curve == "API_KEY_CURVE_ED25519":
        ed25519.Ed25519PublicKey.from_public_bytes(raw)
        return raw.hex()
    ec_curve: ec.EllipticCurve
    if curve == "API_KEY_CURVE_P256":
        ec_curve = ec.SECP256R1()
    elif curve == "API_KEY_CURVE_SECP256K1":
        ec_curve = ec.SECP256K1()
    else:
        raise ValueError(f"unknown curve {curve}")
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = ec.EllipticCurvePublicKey.from_encoded_point(ec_curve, raw)
    return key.public_bytes(Encoding.X962, PublicFormat.CompressedPoint).hex()
