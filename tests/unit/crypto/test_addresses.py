"""Address derivation for every ADDRESS_FORMAT_* (infra.crypto.addresses)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import coincurve
import nacl.signing
import pytest
from bip_utils import Bech32Decoder, SegwitBech32Decoder
from eth_keys import keys as eth_keys

from infra.crypto import hd
from infra.crypto.addresses import (
    AddressFormat,
    Curve,
    compressed_public_key,
    curve_for_format,
    derive_address,
    parse_address_format,
    parse_curve,
    supported_formats,
)
from infra.errors import InvalidRequest
from tests.unit.crypto.vectors import load_vector

SWAGGER = Path(__file__).resolve().parents[4] / "shared/reference/public_api.swagger.json"
ABANDON = "abandon " * 11 + "about"


def _secp_pub(private_hex: str) -> bytes:
    return coincurve.PrivateKey(bytes.fromhex(private_hex)).public_key.format(compressed=True)


def _ed_pub(seed_hex: str) -> bytes:
    return bytes(nacl.signing.SigningKey(bytes.fromhex(seed_hex)).verify_key)


def _from_mnemonic(mnemonic: str, curve: Curve, path: str, passphrase: str = "") -> bytes:
    return hd.derive_from_mnemonic(mnemonic, curve, path, passphrase).public_key


def _cases() -> list[Any]:
    """(format, curve, public key, expected address, source) from every chain vector file."""
    cases: list[Any] = []

    def add(fmt: AddressFormat, curve: Curve, pub: bytes, address: str, src: str) -> None:
        cases.append(pytest.param(fmt, curve, pub, address, id=f"{fmt.name}-{src}"))

    for v in load_vector("ethereum.json")["vectors"]:
        pub = (
            _from_mnemonic(v["mnemonic"], Curve.SECP256K1, v["path"])
            if "mnemonic" in v
            else _secp_pub(v["private_key"])
        )
        add(AddressFormat.ETHEREUM, Curve.SECP256K1, pub, v["address"], "eth")
    for v in load_vector("solana.json")["vectors"]:
        pub = (
            _from_mnemonic(v["mnemonic"], Curve.ED25519, v["path"])
            if "mnemonic" in v
            else _ed_pub(v["ed25519_seed"])
        )
        add(AddressFormat.SOLANA, Curve.ED25519, pub, v["address"], "sol")
    for v in load_vector("cosmos-sei.json")["vectors"]:
        if v["hrp"] not in ("cosmos", "sei"):
            continue
        fmt = AddressFormat.COSMOS if v["hrp"] == "cosmos" else AddressFormat.SEI
        pub = (
            _from_mnemonic(v["mnemonic"], Curve.SECP256K1, v["path"])
            if "mnemonic" in v
            else _secp_pub(v["private_key"])
        )
        add(fmt, Curve.SECP256K1, pub, v["address"], v["hrp"])
    for name, fmt in (("tron.json", AddressFormat.TRON), ("xrp.json", AddressFormat.XRP)):
        for v in load_vector(name)["vectors"]:
            pub = (
                _from_mnemonic(v["mnemonic"], Curve.SECP256K1, v["path"])
                if "mnemonic" in v
                else _secp_pub(v["private_key"])
            )
            add(fmt, Curve.SECP256K1, pub, v["address"], name)
    for v in load_vector("dogecoin.json")["vectors"]:
        pub = (
            _from_mnemonic(v["mnemonic"], Curve.SECP256K1, v["path"])
            if "mnemonic" in v
            else _secp_pub(v["private_key"])
        )
        add(AddressFormat.DOGE_MAINNET, Curve.SECP256K1, pub, v["address"], "doge")
    for v in load_vector("sui.json")["vectors"]:
        pub = (
            _from_mnemonic(v["mnemonic"], Curve.ED25519, v["path"])
            if "mnemonic" in v
            else _ed_pub(v["ed25519_seed"])
        )
        add(AddressFormat.SUI, Curve.ED25519, pub, v["address"], "sui")
    for v in load_vector("aptos.json")["vectors"]:
        if "mnemonic" in v:
            pub = _from_mnemonic(v["mnemonic"], Curve.ED25519, v["path"])
        elif "ed25519_seed" in v:
            pub = _ed_pub(v["ed25519_seed"])
        elif len(v["public_key"]) == 64:
            pub = bytes.fromhex(v["public_key"])
        else:
            continue  # the secp256k1 SingleKey fixture is not ADDRESS_FORMAT_APTOS
        add(AddressFormat.APTOS, Curve.ED25519, pub, v["address"], "aptos")
    sep5 = load_vector("stellar-sep0005.json")
    for tv in sep5["vectors"]:
        for k in tv["keys"]:
            pub = _from_mnemonic(tv["mnemonic"], Curve.ED25519, k["path"])
            add(AddressFormat.XLM, Curve.ED25519, pub, k["public"], "sep5")
    for v in sep5["extra"]:
        add(AddressFormat.XLM, Curve.ED25519, _ed_pub(v["ed25519_seed"]), v["public"], "wc")
    for v in load_vector("ton.json")["vectors"]:
        if v["wallet"] == "v4r2" and "ed25519_seed" in v:
            pub = _ed_pub(v["ed25519_seed"])
            add(AddressFormat.TON_V4R2, Curve.ED25519, pub, v["address"], "ton")
        if v["wallet"] == "v5r1":
            pub = _ed_pub(v["ed25519_seed"])
            add(
                AddressFormat.TON_V5R1,
                Curve.ED25519,
                pub,
                v["expected_address_non_bounceable"],
                "ton",
            )
    cases.extend(_bitcoin_cases())
    extra = load_vector("turnkey-profile-extra.json")["bitcoin_script_candidates"]
    for v in extra["vectors"]:
        pub = _from_mnemonic(extra["mnemonic"], Curve.SECP256K1, v["path"])
        add(AddressFormat(v["format"]), Curve.SECP256K1, pub, v["address"], v["script"])
    return cases


_BTC_TYPES = {"p2pkh": "P2PKH", "p2sh-p2wpkh": "P2SH", "p2wpkh": "P2WPKH", "p2tr": "P2TR"}


def _bitcoin_cases() -> list[Any]:
    btc = load_vector("bitcoin.json")
    cases = []
    for v in btc["vectors"]:
        fmt = AddressFormat[f"BITCOIN_{v['network'].upper()}_{_BTC_TYPES[v['type']]}"]
        pub = _from_mnemonic(btc["mnemonic"], Curve.SECP256K1, v["path"], btc["passphrase"])
        cases.append(pytest.param(fmt, Curve.SECP256K1, pub, v["address"], id=v["path"]))
    for v in btc["pubkey_vectors"]:
        fmt = AddressFormat[f"BITCOIN_{v['network'].upper()}_{_BTC_TYPES[v['type']]}"]
        pub = bytes.fromhex(v["pubkey"]) if "pubkey" in v else _secp_pub(v["privkey_hex"])
        cases.append(pytest.param(fmt, Curve.SECP256K1, pub, v["address"], id=v["address"]))
    return cases


@pytest.mark.parametrize(("fmt", "curve", "pub", "address"), _cases())
def test_published_vectors_derive_the_published_address(
    fmt: AddressFormat, curve: Curve, pub: bytes, address: str
) -> None:
    assert derive_address(curve, fmt, pub) == address


def test_every_swagger_address_format_is_implemented() -> None:
    path = SWAGGER if SWAGGER.is_file() else None
    if path is None:
        pytest.skip("shared/reference not present")
    enum = json.loads(path.read_text())["definitions"]["v1AddressFormat"]["enum"]
    assert sorted(enum) == sorted(f.value for f in AddressFormat)
    pub_secp = _secp_pub("46" * 32)
    pub_ed = _ed_pub("46" * 32)
    for value in enum:
        fmt = AddressFormat(value)
        curve = curve_for_format(fmt)
        address = derive_address(curve, value, pub_ed if curve is Curve.ED25519 else pub_secp)
        assert address, value


def test_every_swagger_curve_is_known() -> None:
    if not SWAGGER.is_file():
        pytest.skip("shared/reference not present")
    enum = json.loads(SWAGGER.read_text())["definitions"]["v1Curve"]["enum"]
    assert sorted(enum) == sorted(c.value for c in Curve)


# --- formats without a published vector: checked against independent computation -----


def test_ethereum_address_agrees_with_eth_keys() -> None:
    private = bytes.fromhex("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    pub = coincurve.PrivateKey(private).public_key.format(compressed=False)
    expected = eth_keys.PrivateKey(private).public_key.to_checksum_address()
    assert derive_address(Curve.SECP256K1, AddressFormat.ETHEREUM, pub) == expected


@pytest.mark.parametrize(
    ("fmt", "version"),
    [(AddressFormat.DOGE_TESTNET, 0x71), (AddressFormat.BITCOIN_REGTEST_P2PKH, 0x6F)],
)
def test_base58_p2pkh_testnets_use_the_network_version_byte(
    fmt: AddressFormat, version: int
) -> None:
    from bip_utils import Base58Decoder

    pub = _secp_pub("46" * 32)
    raw = Base58Decoder.CheckDecode(derive_address(Curve.SECP256K1, fmt, pub))
    h160 = hashlib.new("ripemd160", hashlib.sha256(pub).digest()).digest()
    assert raw == bytes([version]) + h160


@pytest.mark.parametrize("net,hrp", [("SIGNET", "tb"), ("REGTEST", "bcrt"), ("TESTNET", "tb")])
def test_p2wsh_is_sha256_of_a_one_of_one_multisig_script(net: str, hrp: str) -> None:
    pub = _secp_pub("46" * 32)
    address = derive_address(Curve.SECP256K1, AddressFormat[f"BITCOIN_{net}_P2WSH"], pub)
    version, program = SegwitBech32Decoder.Decode(hrp, address)
    assert version == 0
    assert program == hashlib.sha256(b"\x51\x21" + pub + b"\x51\xae").digest()


def test_signet_and_regtest_p2tr_use_their_hrp() -> None:
    pub = _secp_pub("46" * 32)
    testnet = derive_address(Curve.SECP256K1, AddressFormat.BITCOIN_TESTNET_P2TR, pub)
    assert derive_address(Curve.SECP256K1, AddressFormat.BITCOIN_SIGNET_P2TR, pub) == testnet
    regtest = derive_address(Curve.SECP256K1, AddressFormat.BITCOIN_REGTEST_P2TR, pub)
    assert regtest.startswith("bcrt1p")
    assert regtest[4:] != testnet[2:]  # same program, different checksum


def test_ton_v3r2_matches_tonsdk_if_installed() -> None:
    tonsdk = pytest.importorskip("tonsdk.contract.wallet")
    pub = _ed_pub("46" * 32)
    wallet_cls = tonsdk.Wallets.ALL[tonsdk.WalletVersionEnum.v3r2]
    wallet = wallet_cls(public_key=pub, private_key=b"", wc=0)
    expected = wallet.address.to_string(True, True, False)
    assert derive_address(Curve.ED25519, AddressFormat.TON_V3R2, pub) == expected


def _spark_payload(address: str, hrp: str) -> bytes:
    class Bech32mDecoder(Bech32Decoder):
        @staticmethod
        def _VerifyChecksum(hrp: str, data: list[int]) -> bool:
            from bip_utils.bech32.bech32 import Bech32Encodings, Bech32Utils

            return bool(Bech32Utils.VerifyChecksum(hrp, data, Bech32Encodings.BECH32M))

    return bytes(Bech32mDecoder.Decode(hrp, address))


def test_spark_docs_address_payload_is_the_protobuf_wrapped_identity_key() -> None:
    doc = load_vector("turnkey-profile-extra.json")["spark_docs_address"]
    payload = _spark_payload(doc["address"], doc["hrp"])
    assert payload[:2] == b"\x0a\x21"
    identity = coincurve.PublicKey(payload[2:]).format(compressed=True)
    ours = derive_address(Curve.SECP256K1, AddressFormat.SPARK_REGTEST, identity)
    assert ours.startswith(doc["current_hrp_regtest"] + "1")
    assert _spark_payload(ours, doc["current_hrp_regtest"]) == payload
    # Same data part as the published address; only the prefix (and so the checksum) moved.
    assert ours.split("1", 1)[1][:-6] == doc["address"].split("1", 1)[1][:-6]


def test_spark_regtest_uses_the_sparkrt_prefix() -> None:
    pub = _secp_pub("46" * 32)
    address = derive_address(Curve.SECP256K1, AddressFormat.SPARK_REGTEST, pub)
    assert address.startswith("sparkrt1")
    assert _spark_payload(address, "sparkrt") == b"\x0a\x21" + pub


def test_raw_key_formats_are_hex_without_prefix() -> None:
    pub = _secp_pub("46" * 32)
    full = coincurve.PublicKey(pub).format(compressed=False)
    assert derive_address(Curve.SECP256K1, AddressFormat.COMPRESSED, full) == pub.hex()
    assert derive_address(Curve.SECP256K1, AddressFormat.UNCOMPRESSED, pub) == full.hex()
    ed = _ed_pub("46" * 32)
    assert derive_address(Curve.ED25519, AddressFormat.COMPRESSED, b"\x00" + ed) == ed.hex()


def test_p256_keys_support_only_the_raw_formats() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = ec.derive_private_key(7, ec.SECP256R1()).public_key()
    pub = key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    assert derive_address(Curve.P256, AddressFormat.UNCOMPRESSED, pub) == pub.hex()
    assert compressed_public_key(Curve.P256, pub)[0] in (2, 3)
    assert supported_formats(Curve.P256) == {AddressFormat.COMPRESSED, AddressFormat.UNCOMPRESSED}
    with pytest.raises(InvalidRequest):
        derive_address(Curve.P256, AddressFormat.ETHEREUM, pub)


# --- rejections ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt", sorted(supported_formats(Curve.SECP256K1) - {AddressFormat.COMPRESSED})
)
def test_ed25519_key_cannot_produce_secp256k1_formats(fmt: AddressFormat) -> None:
    with pytest.raises(InvalidRequest) as err:
        derive_address(Curve.ED25519, fmt, _ed_pub("46" * 32))
    assert fmt.value in err.value.message
    assert "CURVE_SECP256K1" in err.value.message or "COMPRESSED" in err.value.message


@pytest.mark.parametrize(
    "fmt", sorted(supported_formats(Curve.ED25519) - {AddressFormat.COMPRESSED})
)
def test_secp256k1_key_cannot_produce_ed25519_formats(fmt: AddressFormat) -> None:
    with pytest.raises(InvalidRequest) as err:
        derive_address(Curve.SECP256K1, fmt, _secp_pub("46" * 32))
    assert "CURVE_ED25519" in err.value.message


def test_unknown_enums_name_what_to_send() -> None:
    with pytest.raises(InvalidRequest, match="CURVE_SECP256K1"):
        parse_curve("CURVE_BLS")
    with pytest.raises(InvalidRequest, match="ADDRESS_FORMAT_ETHEREUM"):
        parse_address_format("ADDRESS_FORMAT_DOGE")


@pytest.mark.parametrize(
    ("curve", "pub"),
    [(Curve.SECP256K1, b"\x02" + b"\x00" * 32), (Curve.ED25519, b"\x01" * 31)],
)
def test_malformed_public_keys_are_rejected(curve: Curve, pub: bytes) -> None:
    fmt = AddressFormat.ETHEREUM if curve is Curve.SECP256K1 else AddressFormat.SOLANA
    with pytest.raises(InvalidRequest):
        derive_address(curve, fmt, pub)


def test_abandon_mnemonic_eth_default_path_is_the_well_known_address() -> None:
    pub = _from_mnemonic(ABANDON, Curve.SECP256K1, "m/44'/60'/0'/0/0")
    assert derive_address(Curve.SECP256K1, AddressFormat.ETHEREUM, pub) == (
        "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
    )
