"""Every BITCOIN_* and DOGE_* address checked with a second, independent implementation.

walletd encodes these with bip-utils. Here they are decoded with other code: the ``base58``
package (base58check) and ``bech32m`` (sipa's BIP-173/BIP-350 reference segwit code, which
also refuses a witness version with the wrong checksum kind), and the expected program is
computed from first principles with hashlib and coincurve (libsecp256k1): hash160(pubkey),
the P2SH-P2WPKH redeem script, sha256 of the P2WSH witness script and the BIP-341 tweaked
x-only key. The BIP-341 computation is itself pinned to the published BIP-86 output key, and
the published BIP-84/BIP-86 mainnet addresses give the program every other network must carry.
"""

from __future__ import annotations

import hashlib

import base58
import bech32m
import coincurve
import pytest

from infra.crypto import hd
from infra.crypto.addresses import AddressFormat, Curve, derive_address
from tests.unit.crypto.vectors import load_vector

HRP = {"MAINNET": "bc", "TESTNET": "tb", "SIGNET": "tb", "REGTEST": "bcrt"}
P2PKH_VERSION = {"MAINNET": 0x00, "TESTNET": 0x6F, "SIGNET": 0x6F, "REGTEST": 0x6F}
P2SH_VERSION = {"MAINNET": 0x05, "TESTNET": 0xC4, "SIGNET": 0xC4, "REGTEST": 0xC4}
DOGE_VERSION = {AddressFormat.DOGE_MAINNET: 0x1E, AddressFormat.DOGE_TESTNET: 0x71}
DOGE_P2SH_VERSION = {AddressFormat.DOGE_MAINNET: 0x16, AddressFormat.DOGE_TESTNET: 0xC4}

BITCOIN_FORMATS = [f for f in AddressFormat if f.name.startswith("BITCOIN_")]
DOGE_FORMATS = [f for f in AddressFormat if f.name.startswith("DOGE_")]
BTC_VECTORS = load_vector("bitcoin.json")


def _hash160(data: bytes) -> bytes:
    return hashlib.new("ripemd160", hashlib.sha256(data).digest()).digest()


def _tagged_hash(tag: str, data: bytes) -> bytes:
    tag_hash = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_hash + tag_hash + data).digest()


def _bip341_output_key(pub: bytes) -> bytes:
    """BIP-341 key-path-only output key: lift_x(P) + hash_TapTweak(P.x)·G, x-only."""
    x_only = pub[1:33]
    internal = coincurve.PublicKey(b"\x02" + x_only)  # lift_x: the even-y point
    return internal.add(_tagged_hash("TapTweak", x_only)).format(compressed=True)[1:]


def _abandon_key(path: str) -> bytes:
    return hd.derive_from_mnemonic(BTC_VECTORS["mnemonic"], Curve.SECP256K1, path,
                                   BTC_VECTORS["passphrase"]).public_key


def _keys() -> list[object]:
    """Compressed keys: an arbitrary one, and the BIP-84 and BIP-86 vector keys."""
    return [
        pytest.param(coincurve.PrivateKey(bytes.fromhex("46" * 32)).public_key.format(),
                     id="key46"),
        pytest.param(_abandon_key("m/84'/0'/0'/0/0"), id="bip84"),
        pytest.param(_abandon_key("m/86'/0'/0'/0/0"), id="bip86"),
    ]


def _expected_segwit(kind: str, pub: bytes) -> tuple[int, bytes]:
    if kind == "P2WPKH":
        return 0, _hash160(pub)
    if kind == "P2WSH":  # 1-of-1 multisig witness script: OP_1 <33-byte key> OP_1 OP_CHECKMULTISIG
        return 0, hashlib.sha256(b"\x51\x21" + pub + b"\x51\xae").digest()
    assert kind == "P2TR"
    return 1, _bip341_output_key(pub)


@pytest.mark.parametrize("pub", _keys())
@pytest.mark.parametrize("fmt", BITCOIN_FORMATS, ids=lambda f: f.name)
def test_bitcoin_address_decodes_to_the_independently_computed_payload(
    fmt: AddressFormat, pub: bytes
) -> None:
    _, network, kind = fmt.name.split("_")
    address = derive_address(Curve.SECP256K1, fmt, pub)
    if kind == "P2PKH":
        payload = bytes([P2PKH_VERSION[network]]) + _hash160(pub)
        assert base58.b58decode_check(address) == payload
        assert base58.b58encode_check(payload).decode() == address
    elif kind == "P2SH":  # P2SH-P2WPKH: hash160 of the redeem script 0x00 0x14 <hash160(pub)>
        payload = bytes([P2SH_VERSION[network]]) + _hash160(b"\x00\x14" + _hash160(pub))
        assert base58.b58decode_check(address) == payload
        assert base58.b58encode_check(payload).decode() == address
    else:
        version, program = _expected_segwit(kind, pub)
        decoded = bech32m.decode(HRP[network], address)
        assert (decoded.witver, bytes(decoded.witprog)) == (version, program)
        assert bech32m.encode(HRP[network], version, program) == address
        for other in {"bc", "tb", "bcrt"} - {HRP[network]}:
            with pytest.raises(bech32m.HrpDoesNotMatch):
                bech32m.decode(other, address)


@pytest.mark.parametrize("pub", _keys())
@pytest.mark.parametrize("fmt", DOGE_FORMATS, ids=lambda f: f.name)
def test_dogecoin_address_is_base58check_of_the_network_version_and_hash160(
    fmt: AddressFormat, pub: bytes
) -> None:
    address = derive_address(Curve.SECP256K1, fmt, pub)
    payload = bytes([DOGE_VERSION[fmt]]) + _hash160(pub)
    assert base58.b58decode_check(address) == payload
    assert base58.b58encode_check(payload).decode() == address
    # Never the P2SH version byte of the same network.
    assert base58.b58decode_check(address)[0] != DOGE_P2SH_VERSION[fmt]


def test_bip341_computation_reproduces_the_published_bip86_output_key() -> None:
    first = next(v for v in BTC_VECTORS["vectors"] if v["path"] == "m/86'/0'/0'/0/0")
    pub = _abandon_key(first["path"])
    assert pub[1:].hex() == first["internal_key"]
    assert _bip341_output_key(pub).hex() == first["output_key"]


def _vector_key(v: dict[str, str]) -> bytes:
    if "pubkey" in v:
        return bytes.fromhex(v["pubkey"])
    if "privkey_hex" in v:
        return coincurve.PrivateKey(bytes.fromhex(v["privkey_hex"])).public_key.format()
    return _abandon_key(v["path"])


_PUBLISHED_SEGWIT = [
    pytest.param(v, id=f"{v['type']}-{v['network']}-{v.get('path', v['address'][:12])}")
    for v in BTC_VECTORS["vectors"] + BTC_VECTORS["pubkey_vectors"]
    if v["type"] in ("p2wpkh", "p2tr")
]


@pytest.mark.parametrize("vector", _PUBLISHED_SEGWIT)
@pytest.mark.parametrize("network", ["MAINNET", "TESTNET", "SIGNET", "REGTEST"])
def test_every_network_carries_the_program_of_the_published_address(
    vector: dict[str, str], network: str
) -> None:
    """BIP-84/BIP-86 (and the SDK pairs) publish one network; the others differ in the hrp."""
    published = bech32m.decode(HRP[vector["network"].upper()], vector["address"])
    kind = "P2WPKH" if vector["type"] == "p2wpkh" else "P2TR"
    ours = derive_address(Curve.SECP256K1, AddressFormat[f"BITCOIN_{network}_{kind}"],
                          _vector_key(vector))
    assert ours.startswith(HRP[network] + "1")
    decoded = bech32m.decode(HRP[network], ours)
    assert (decoded.witver, bytes(decoded.witprog)) == (published.witver,
                                                        bytes(published.witprog))
    assert decoded.witver == (0 if kind == "P2WPKH" else 1)
    if kind == "P2TR":
        assert bytes(decoded.witprog) == _bip341_output_key(_vector_key(vector))


def test_published_testnet_p2pkh_and_p2sh_vectors_decode_with_base58() -> None:
    """The BIP-44/BIP-49 testnet vectors confirm 0x6f / 0xc4 independently of walletd."""
    checked = 0
    for v in BTC_VECTORS["vectors"] + BTC_VECTORS["pubkey_vectors"]:
        if v["network"] != "testnet" or v["type"] not in ("p2pkh", "p2sh-p2wpkh"):
            continue
        checked += 1
        pub = _vector_key(v)
        kind = "P2PKH" if v["type"] == "p2pkh" else "P2SH"
        expected = P2PKH_VERSION["TESTNET"] if kind == "P2PKH" else P2SH_VERSION["TESTNET"]
        assert base58.b58decode_check(v["address"])[0] == expected
        for network in ("TESTNET", "SIGNET", "REGTEST"):
            fmt = AddressFormat[f"BITCOIN_{network}_{kind}"]
            assert derive_address(Curve.SECP256K1, fmt, pub) == v["address"]
    assert checked == 2
