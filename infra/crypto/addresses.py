"""Curves, address formats and public key → address derivation.

Every ``ADDRESS_FORMAT_*`` of the wire enum (``v1AddressFormat`` in the public swagger) maps
to one encoder here. The encoders are bip-utils calls, as CRYPTO.md §2 prescribes; the two
compositions bip-utils has no class for (P2WSH and Spark's bech32m identity address) are
built from bip-utils primitives.

Compatibility choices that no public Turnkey source confirms (CRYPTO.md §3, §8):

* ``*_P2SH`` is P2SH-P2WPKH (BIP49); ``*_P2WSH`` is a 1-of-1 multisig witness script
  (BIP48). Both live in :func:`_p2sh_redeem_script` / :func:`_p2wsh_witness_script`.
* TON addresses are non-bounceable, mainnet, workchain 0.
* ``UNCOMPRESSED`` is the 65-byte ``04…`` hex; ``COMPRESSED`` for ed25519 is the 32-byte key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from enum import StrEnum

import coincurve
from bip_utils import (
    AptosAddrEncoder,
    AtomAddrEncoder,
    EthAddrEncoder,
    P2PKHAddrEncoder,
    P2SHAddrEncoder,
    P2TRAddrEncoder,
    P2WPKHAddrEncoder,
    SegwitBech32Encoder,
    SolAddrEncoder,
    SuiAddrEncoder,
    TonAddrEncoder,
    TonAddrVersions,
    TrxAddrEncoder,
    XlmAddrEncoder,
    XlmAddrTypes,
    XrpAddrEncoder,
)
from bip_utils.bech32.bech32 import Bech32Encoder, Bech32Encodings, Bech32Utils
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from infra.errors import InvalidRequest


class Curve(StrEnum):
    """The ``v1Curve`` wire enum."""

    SECP256K1 = "CURVE_SECP256K1"
    ED25519 = "CURVE_ED25519"
    P256 = "CURVE_P256"


class AddressFormat(StrEnum):
    """The ``v1AddressFormat`` wire enum (every value of the public swagger)."""

    UNCOMPRESSED = "ADDRESS_FORMAT_UNCOMPRESSED"
    COMPRESSED = "ADDRESS_FORMAT_COMPRESSED"
    ETHEREUM = "ADDRESS_FORMAT_ETHEREUM"
    SOLANA = "ADDRESS_FORMAT_SOLANA"
    COSMOS = "ADDRESS_FORMAT_COSMOS"
    TRON = "ADDRESS_FORMAT_TRON"
    SUI = "ADDRESS_FORMAT_SUI"
    APTOS = "ADDRESS_FORMAT_APTOS"
    BITCOIN_MAINNET_P2PKH = "ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH"
    BITCOIN_MAINNET_P2SH = "ADDRESS_FORMAT_BITCOIN_MAINNET_P2SH"
    BITCOIN_MAINNET_P2WPKH = "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"
    BITCOIN_MAINNET_P2WSH = "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WSH"
    BITCOIN_MAINNET_P2TR = "ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR"
    BITCOIN_TESTNET_P2PKH = "ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH"
    BITCOIN_TESTNET_P2SH = "ADDRESS_FORMAT_BITCOIN_TESTNET_P2SH"
    BITCOIN_TESTNET_P2WPKH = "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH"
    BITCOIN_TESTNET_P2WSH = "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WSH"
    BITCOIN_TESTNET_P2TR = "ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR"
    BITCOIN_SIGNET_P2PKH = "ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH"
    BITCOIN_SIGNET_P2SH = "ADDRESS_FORMAT_BITCOIN_SIGNET_P2SH"
    BITCOIN_SIGNET_P2WPKH = "ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH"
    BITCOIN_SIGNET_P2WSH = "ADDRESS_FORMAT_BITCOIN_SIGNET_P2WSH"
    BITCOIN_SIGNET_P2TR = "ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR"
    BITCOIN_REGTEST_P2PKH = "ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH"
    BITCOIN_REGTEST_P2SH = "ADDRESS_FORMAT_BITCOIN_REGTEST_P2SH"
    BITCOIN_REGTEST_P2WPKH = "ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH"
    BITCOIN_REGTEST_P2WSH = "ADDRESS_FORMAT_BITCOIN_REGTEST_P2WSH"
    BITCOIN_REGTEST_P2TR = "ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR"
    SEI = "ADDRESS_FORMAT_SEI"
    XLM = "ADDRESS_FORMAT_XLM"
    DOGE_MAINNET = "ADDRESS_FORMAT_DOGE_MAINNET"
    DOGE_TESTNET = "ADDRESS_FORMAT_DOGE_TESTNET"
    TON_V3R2 = "ADDRESS_FORMAT_TON_V3R2"
    TON_V4R2 = "ADDRESS_FORMAT_TON_V4R2"
    TON_V5R1 = "ADDRESS_FORMAT_TON_V5R1"
    XRP = "ADDRESS_FORMAT_XRP"
    SPARK_MAINNET = "ADDRESS_FORMAT_SPARK_MAINNET"
    SPARK_REGTEST = "ADDRESS_FORMAT_SPARK_REGTEST"


def parse_curve(value: str, *, field: str = "curve") -> Curve:
    """Turn a wire string into a :class:`Curve`.

    Raises:
        InvalidRequest: naming the accepted values when ``value`` is not one of them.
    """
    try:
        return Curve(value)
    except ValueError:
        accepted = ", ".join(c.value for c in Curve)
        raise InvalidRequest(
            f"unknown curve {value!r}; send one of {accepted}", field=field
        ) from None


def parse_address_format(value: str, *, field: str = "addressFormat") -> AddressFormat:
    """Turn a wire string into an :class:`AddressFormat`.

    Raises:
        InvalidRequest: when ``value`` is not an ``ADDRESS_FORMAT_*`` of the enum.
    """
    try:
        return AddressFormat(value)
    except ValueError:
        raise InvalidRequest(
            f"unknown address format {value!r}; send one of the ADDRESS_FORMAT_* values "
            "(e.g. ADDRESS_FORMAT_ETHEREUM, ADDRESS_FORMAT_SOLANA)",
            field=field,
        ) from None


# --- public key normalisation ----------------------------------------------------------


def secp256k1_public_key(public_key: bytes) -> coincurve.PublicKey:
    """Parse a compressed (33 B) or uncompressed (65 B) secp256k1 public key."""
    try:
        return coincurve.PublicKey(bytes(public_key))
    except (ValueError, TypeError) as ex:
        raise InvalidRequest("not a valid secp256k1 public key") from ex


def ed25519_public_key(public_key: bytes) -> bytes:
    """Return the 32-byte ed25519 key, accepting SLIP-10's ``00``-prefixed 33-byte form."""
    if len(public_key) == 33 and public_key[0] == 0:
        public_key = public_key[1:]
    if len(public_key) != 32:
        raise InvalidRequest("an ed25519 public key is 32 bytes")
    return bytes(public_key)


def p256_public_key(public_key: bytes) -> ec.EllipticCurvePublicKey:
    """Parse a compressed or uncompressed P-256 public key."""
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes(public_key))
    except ValueError as ex:
        raise InvalidRequest("not a valid P-256 public key") from ex


def compressed_public_key(curve: Curve, public_key: bytes) -> bytes:
    """The compact public key walletd reports (``publicKey`` of accounts and keys).

    secp256k1 and P-256: 33-byte SEC1 compressed; ed25519: the 32-byte key.
    """
    if curve is Curve.SECP256K1:
        return secp256k1_public_key(public_key).format(compressed=True)
    if curve is Curve.ED25519:
        return ed25519_public_key(public_key)
    return p256_public_key(public_key).public_bytes(Encoding.X962, PublicFormat.CompressedPoint)


# --- encoders per format ----------------------------------------------------------------

_Encoder = Callable[[bytes], str]

_BTC_NETWORKS: dict[str, tuple[bytes, bytes, str]] = {
    # network: (P2PKH version, P2SH version, bech32 hrp)
    "MAINNET": (b"\x00", b"\x05", "bc"),
    "TESTNET": (b"\x6f", b"\xc4", "tb"),
    "SIGNET": (b"\x6f", b"\xc4", "tb"),
    "REGTEST": (b"\x6f", b"\xc4", "bcrt"),
}

_OP_1 = b"\x51"
_OP_CHECKMULTISIG = b"\xae"


def _p2wsh_witness_script(compressed_key: bytes) -> bytes:
    """1-of-1 multisig witness script (BIP48 native segwit), CRYPTO.md §3 recommendation."""
    return _OP_1 + bytes([len(compressed_key)]) + compressed_key + _OP_1 + _OP_CHECKMULTISIG


def _p2wsh(hrp: str) -> _Encoder:
    def encode(pub: bytes) -> str:
        key = secp256k1_public_key(pub).format(compressed=True)
        program = hashlib.sha256(_p2wsh_witness_script(key)).digest()
        return str(SegwitBech32Encoder.Encode(hrp, 0, program))

    return encode


class _Bech32mEncoder(Bech32Encoder):
    """bip-utils' plain (non-segwit) bech32 encoder with the bech32m checksum constant."""

    @staticmethod
    def _ComputeChecksum(hrp: str, data: list[int]) -> list[int]:
        return list(Bech32Utils.ComputeChecksum(hrp, data, Bech32Encodings.BECH32M))


_SPARK_IDENTITY_FIELD = b"\x0a\x21"  # protobuf field 1, length-delimited, 33 bytes


def _spark(hrp: str) -> _Encoder:
    """Spark address: bech32m(hrp, protobuf{identity_public_key = compressed pubkey})."""

    def encode(pub: bytes) -> str:
        key = secp256k1_public_key(pub).format(compressed=True)
        return str(_Bech32mEncoder.Encode(hrp, _SPARK_IDENTITY_FIELD + key))

    return encode


def _secp(encoder: Callable[..., str], **kwargs: object) -> _Encoder:
    """Wrap a bip-utils encoder that takes a secp256k1 key."""

    def encode(pub: bytes) -> str:
        key = secp256k1_public_key(pub).format(compressed=True)
        return str(encoder(key, **kwargs))

    return encode


def _ed(encoder: Callable[..., str], **kwargs: object) -> _Encoder:
    """Wrap a bip-utils encoder that takes an ed25519 key (bip-utils wants ``00`` ‖ key)."""

    def encode(pub: bytes) -> str:
        return str(encoder(b"\x00" + ed25519_public_key(pub), **kwargs))

    return encode


def _bitcoin_encoders() -> dict[AddressFormat, _Encoder]:
    table: dict[AddressFormat, _Encoder] = {}
    for network, (p2pkh_ver, p2sh_ver, hrp) in _BTC_NETWORKS.items():
        prefix = f"BITCOIN_{network}_"
        table[AddressFormat[prefix + "P2PKH"]] = _secp(
            P2PKHAddrEncoder.EncodeKey, net_ver=p2pkh_ver
        )
        # P2SH-P2WPKH (BIP49), CRYPTO.md §3 recommendation.
        table[AddressFormat[prefix + "P2SH"]] = _secp(P2SHAddrEncoder.EncodeKey, net_ver=p2sh_ver)
        table[AddressFormat[prefix + "P2WPKH"]] = _secp(
            P2WPKHAddrEncoder.EncodeKey, hrp=hrp, wit_ver=0
        )
        table[AddressFormat[prefix + "P2WSH"]] = _p2wsh(hrp)
        table[AddressFormat[prefix + "P2TR"]] = _secp(P2TRAddrEncoder.EncodeKey, hrp=hrp)
    return table


_SECP256K1_ENCODERS: dict[AddressFormat, _Encoder] = {
    AddressFormat.ETHEREUM: _secp(EthAddrEncoder.EncodeKey),
    AddressFormat.COSMOS: _secp(AtomAddrEncoder.EncodeKey, hrp="cosmos"),
    AddressFormat.SEI: _secp(AtomAddrEncoder.EncodeKey, hrp="sei"),
    AddressFormat.TRON: _secp(TrxAddrEncoder.EncodeKey),
    AddressFormat.XRP: _secp(XrpAddrEncoder.EncodeKey),
    AddressFormat.DOGE_MAINNET: _secp(P2PKHAddrEncoder.EncodeKey, net_ver=b"\x1e"),
    AddressFormat.DOGE_TESTNET: _secp(P2PKHAddrEncoder.EncodeKey, net_ver=b"\x71"),
    AddressFormat.SPARK_MAINNET: _spark("spark"),
    AddressFormat.SPARK_REGTEST: _spark("sparkrt"),
    **_bitcoin_encoders(),
}

_ED25519_ENCODERS: dict[AddressFormat, _Encoder] = {
    AddressFormat.SOLANA: _ed(SolAddrEncoder.EncodeKey),
    AddressFormat.SUI: _ed(SuiAddrEncoder.EncodeKey),
    AddressFormat.APTOS: _ed(AptosAddrEncoder.EncodeKey),
    AddressFormat.XLM: _ed(XlmAddrEncoder.EncodeKey, addr_type=XlmAddrTypes.PUB_KEY),
    AddressFormat.TON_V3R2: _ed(
        TonAddrEncoder.EncodeKey, version=TonAddrVersions.V3R2, is_bounceable=False
    ),
    AddressFormat.TON_V4R2: _ed(
        TonAddrEncoder.EncodeKey, version=TonAddrVersions.V4, is_bounceable=False
    ),
    AddressFormat.TON_V5R1: _ed(
        TonAddrEncoder.EncodeKey, version=TonAddrVersions.V5R1, is_bounceable=False
    ),
}


def _hex_key(curve: Curve, pub: bytes, *, compressed: bool) -> str:
    if curve is Curve.SECP256K1:
        return secp256k1_public_key(pub).format(compressed=compressed).hex()
    if curve is Curve.ED25519:
        if not compressed:
            raise InvalidRequest(
                "ADDRESS_FORMAT_UNCOMPRESSED needs CURVE_SECP256K1 or CURVE_P256; "
                "for ed25519 send ADDRESS_FORMAT_COMPRESSED",
                field="addressFormat",
            )
        return ed25519_public_key(pub).hex()
    point = PublicFormat.CompressedPoint if compressed else PublicFormat.UncompressedPoint
    return p256_public_key(pub).public_bytes(Encoding.X962, point).hex()


def supported_formats(curve: Curve) -> frozenset[AddressFormat]:
    """Every address format ``curve`` can produce."""
    common = {AddressFormat.COMPRESSED}
    if curve is not Curve.ED25519:
        common.add(AddressFormat.UNCOMPRESSED)
    if curve is Curve.SECP256K1:
        return frozenset(common | set(_SECP256K1_ENCODERS))
    if curve is Curve.ED25519:
        return frozenset(common | set(_ED25519_ENCODERS))
    return frozenset(common)


def curve_for_format(address_format: AddressFormat) -> Curve:
    """The one curve that produces ``address_format`` (secp256k1 for the raw key formats)."""
    if address_format in _ED25519_ENCODERS:
        return Curve.ED25519
    return Curve.SECP256K1


def derive_address(
    curve: Curve | str, address_format: AddressFormat | str, public_key: bytes
) -> str:
    """Encode ``public_key`` as an address of ``address_format``.

    Args:
        curve: the key's curve (enum or wire string).
        address_format: the ``ADDRESS_FORMAT_*`` (enum or wire string).
        public_key: secp256k1/P-256 SEC1 bytes (33 or 65) or the 32-byte ed25519 key.

    Returns:
        The address string as the wire returns it.

    Raises:
        InvalidRequest: for an unknown curve/format, a curve that cannot produce the format,
            or a malformed key.
    """
    curve = parse_curve(curve) if not isinstance(curve, Curve) else curve
    if not isinstance(address_format, AddressFormat):
        address_format = parse_address_format(address_format)
    if address_format is AddressFormat.COMPRESSED:
        return _hex_key(curve, public_key, compressed=True)
    if address_format is AddressFormat.UNCOMPRESSED:
        return _hex_key(curve, public_key, compressed=False)
    table = _SECP256K1_ENCODERS if curve is Curve.SECP256K1 else _ED25519_ENCODERS
    encoder = table.get(address_format) if curve is not Curve.P256 else None
    if encoder is None:
        needed = curve_for_format(address_format)
        raise InvalidRequest(
            f"{address_format.value} cannot be derived from a {curve.value} key; "
            f"use {needed.value} for this address format",
            field="addressFormat",
        )
    return encoder(bytes(public_key))
