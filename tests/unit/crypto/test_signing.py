"""Raw payload signing (infra.crypto.signing), verified with independent libraries."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import coincurve
import nacl.signing
import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_keys import keys as eth_keys
from eth_utils import keccak

from infra.crypto import signing
from infra.crypto.addresses import AddressFormat, Curve, derive_address
from infra.crypto.signing import HashFunction, PayloadEncoding
from infra.errors import InvalidRequest
from tests.unit.crypto.vectors import load_vector

ECDSA = load_vector("ecdsa-secp256k1-rfc6979.json")
ED25519 = load_vector("ed25519-rfc8032.json")
EIP = load_vector("eip712-eip191.json")
APTOS = load_vector("aptos.json")
N = signing.SECP256K1_ORDER

HEX = PayloadEncoding.HEXADECIMAL
TEXT = PayloadEncoding.TEXT_UTF8
EIP712 = PayloadEncoding.EIP712


def _der_to_rs(der: bytes) -> tuple[int, int]:
    assert der[0] == 0x30
    r_len = der[3]
    r = int.from_bytes(der[4 : 4 + r_len], "big")
    s_off = 4 + r_len
    s = int.from_bytes(der[s_off + 2 : s_off + 2 + der[s_off + 1]], "big")
    return r, s


def _recover_eth_address(digest: bytes, sig: signing.Signature) -> str:
    raw = bytes.fromhex(sig.r + sig.s) + bytes([int(sig.v, 16)])
    return eth_keys.Signature(raw).recover_public_key_from_msg_hash(digest).to_checksum_address()


# --- secp256k1 ------------------------------------------------------------------------


@pytest.mark.parametrize("vector", ECDSA["vectors"], ids=lambda v: v["message"][:20])
def test_secp256k1_signature_matches_the_rfc6979_vector(vector: dict[str, Any]) -> None:
    key = bytes.fromhex(vector["d"])
    sig = signing.sign_raw_payload(
        Curve.SECP256K1, key, vector["message"], TEXT, HashFunction.SHA256
    )
    r, s = _der_to_rs(bytes.fromhex(vector["signature_der"]))
    assert (sig.r, sig.s) == (f"{r:064x}", f"{s:064x}")
    assert sig.v == f"{vector['i']:02x}"


def test_signature_fields_are_64_hex_chars_without_prefix_and_v_is_00_or_01() -> None:
    seen_v = set()
    for i in range(1, 40):
        key = i.to_bytes(32, "big")
        sig = signing.sign_raw_payload(Curve.SECP256K1, key, f"{i:064x}", HEX, HashFunction.NO_OP)
        assert len(sig.r) == len(sig.s) == 64
        assert not sig.r.startswith("0x")
        assert int(sig.s, 16) <= N // 2  # low-S
        seen_v.add(sig.v)
    assert seen_v == {"00", "01"}


def test_keccak_payload_signature_recovers_the_ethereum_address() -> None:
    key = bytes.fromhex("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
    sig = signing.sign_raw_payload(Curve.SECP256K1, key, "0xdeadbeef", HEX, HashFunction.KECCAK256)
    recovered = _recover_eth_address(bytes(keccak(bytes.fromhex("deadbeef"))), sig)
    assert recovered == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"


def test_personal_sign_digest_with_no_op_matches_eth_account() -> None:
    vec = EIP["eip191_personal_sign"]
    key = bytes.fromhex(vec["private_key"])
    sig = signing.sign_raw_payload(
        Curve.SECP256K1, key, vec["message_hash"], HEX, "HASH_FUNCTION_NO_OP"
    )
    assert (sig.r, sig.s) == (vec["signature"]["r"], vec["signature"]["s"])
    assert int(sig.v, 16) + 27 == vec["signature"]["v"]
    assert _recover_eth_address(bytes.fromhex(vec["message_hash"]), sig) == vec["signer_address"]


def test_eip712_mail_example_digest_and_signature_match_the_eip() -> None:
    vec = EIP["eip712_mail"]
    key = keccak(b"cow")
    assert signing.eip712_digest(json.dumps(vec["typed_data"])).hex() == vec["digest"]
    sig = signing.sign_raw_payload(
        Curve.SECP256K1, key, json.dumps(vec["typed_data"]), EIP712, HashFunction.NO_OP
    )
    assert (sig.r, sig.s) == (vec["signature"]["r"], vec["signature"]["s"])
    assert int(sig.v, 16) + 27 == vec["signature"]["v"]


def test_eip712_signature_verifies_with_eth_account() -> None:
    vec = EIP["eip712_mail"]
    key = keccak(b"cow")
    sig = signing.sign_raw_payload(
        Curve.SECP256K1, key, json.dumps(vec["typed_data"]), EIP712, HashFunction.KECCAK256
    )
    signable = encode_typed_data(full_message=vec["typed_data"])
    vrs = (int(sig.v, 16) + 27, int(sig.r, 16), int(sig.s, 16))
    recovered = Account.recover_message(signable, vrs=vrs)
    assert recovered.lower() == vec["address"]


def test_sha256_text_payload_verifies_with_coincurve() -> None:
    key = coincurve.PrivateKey(b"\x09" * 32)
    sig = signing.sign_raw_payload(
        Curve.SECP256K1, key.secret, "hello cosmos", TEXT, "HASH_FUNCTION_SHA256"
    )
    digest = hashlib.sha256(b"hello cosmos").digest()
    compact = bytes.fromhex(sig.r + sig.s)
    der = coincurve.PublicKey.from_signature_and_message(
        compact + bytes([int(sig.v, 16)]), digest, hasher=None
    )
    assert der.format() == key.public_key.format()


def test_p2tr_accounts_sign_schnorr_with_the_bip86_tweaked_key() -> None:
    key = b"\x05" * 32
    digest = hashlib.sha256(b"taproot").digest()
    sig = signing.sign_raw_payload(
        Curve.SECP256K1,
        key,
        digest.hex(),
        HEX,
        HashFunction.NO_OP,
        address_format=AddressFormat.BITCOIN_MAINNET_P2TR,
    )
    # The x-only output key is the witness program of the account's P2TR address.
    pub = coincurve.PrivateKey(key).public_key.format()
    address = derive_address(Curve.SECP256K1, AddressFormat.BITCOIN_MAINNET_P2TR, pub)
    from bip_utils import SegwitBech32Decoder

    _, output_key = SegwitBech32Decoder.Decode("bc", address)
    xonly = coincurve.PublicKeyXOnly(output_key)
    assert xonly.verify(bytes.fromhex(sig.r + sig.s), digest)


# --- ed25519 --------------------------------------------------------------------------


@pytest.mark.parametrize("vector", ED25519["vectors"], ids=lambda v: v["name"])
def test_ed25519_signature_matches_rfc8032(vector: dict[str, str]) -> None:
    sig = signing.sign_raw_payload(
        Curve.ED25519,
        bytes.fromhex(vector["secret_key"]),
        vector["message"],
        HEX,
        HashFunction.NOT_APPLICABLE,
    )
    assert sig.r + sig.s == vector["signature"]
    assert sig.v == "00"


def test_aptos_published_ed25519_signature_is_reproduced() -> None:
    vec = next(v for v in APTOS["vectors"] if v.get("name") == "ed25519")
    sig = signing.sign_raw_payload(
        Curve.ED25519,
        bytes.fromhex(vec["private_key"]),
        vec["message"],
        HEX,
        "HASH_FUNCTION_NOT_APPLICABLE",
    )
    assert sig.r + sig.s == vec["signature"]


def test_ed25519_text_signature_verifies_with_pynacl() -> None:
    seed = b"\x44" * 32
    sig = signing.sign_raw_payload(
        Curve.ED25519, seed, "solana ✓", TEXT, HashFunction.NOT_APPLICABLE
    )
    verify_key = nacl.signing.SigningKey(seed).verify_key
    assert verify_key.verify("solana ✓".encode(), bytes.fromhex(sig.r + sig.s))


def test_ed25519_accepts_no_op_as_no_hashing() -> None:
    seed = b"\x45" * 32
    a = signing.sign_raw_payload(Curve.ED25519, seed, "00ff", HEX, HashFunction.NO_OP)
    b = signing.sign_raw_payload(Curve.ED25519, seed, "00ff", HEX, HashFunction.NOT_APPLICABLE)
    assert a == b


# --- rejections -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("curve", "payload", "encoding", "hash_function", "hint"),
    [
        (Curve.SECP256K1, "abcd", HEX, HashFunction.NO_OP, "32-byte"),
        (Curve.SECP256K1, "hello", TEXT, HashFunction.NO_OP, "32-byte"),
        (Curve.SECP256K1, "00" * 32, HEX, HashFunction.NOT_APPLICABLE, "HASH_FUNCTION_KECCAK256"),
        (Curve.SECP256K1, "zz", HEX, HashFunction.SHA256, "hex"),
        (Curve.SECP256K1, "abc", HEX, HashFunction.SHA256, "even number"),
        (Curve.SECP256K1, "{not json", EIP712, HashFunction.NO_OP, "EIP-712"),
        (Curve.SECP256K1, '{"types": {}}', EIP712, HashFunction.NO_OP, "EIP-712"),
        (Curve.SECP256K1, "[]", EIP712, HashFunction.NO_OP, "EIP-712"),
        (Curve.SECP256K1, "{}", EIP712, HashFunction.SHA256, "HASH_FUNCTION_NO_OP"),
        (
            Curve.SECP256K1,
            "{}",
            "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION",
            "HASH_FUNCTION_NO_OP",
            "send",
        ),
        (Curve.ED25519, "00", HEX, HashFunction.SHA256, "HASH_FUNCTION_NOT_APPLICABLE"),
        (Curve.ED25519, "00", HEX, HashFunction.KECCAK256, "HASH_FUNCTION_NOT_APPLICABLE"),
        (Curve.ED25519, "{}", EIP712, HashFunction.NOT_APPLICABLE, "secp256k1"),
        (Curve.SECP256K1, "00", "PAYLOAD_ENCODING_BASE64", HashFunction.SHA256, "HEXADECIMAL"),
        (Curve.SECP256K1, "00", HEX, "HASH_FUNCTION_MD5", "HASH_FUNCTION_SHA256"),
        (Curve.P256, "00", HEX, HashFunction.SHA256, "CURVE_SECP256K1"),
    ],
)
def test_invalid_combinations_are_400_saying_what_to_send(
    curve: Curve, payload: str, encoding: Any, hash_function: Any, hint: str
) -> None:
    with pytest.raises(InvalidRequest) as err:
        signing.sign_raw_payload(curve, b"\x01" * 32, payload, encoding, hash_function)
    assert hint in err.value.message
    assert err.value.to_wire()["code"] == 3


def test_eip712_with_not_applicable_names_keccak256_and_never_sha256() -> None:
    """EIP-712 is checked before the generic secp256k1 advice, which would suggest SHA256."""
    vec = EIP["eip712_mail"]
    with pytest.raises(InvalidRequest) as err:
        signing.sign_raw_payload(Curve.SECP256K1, b"\x01" * 32, json.dumps(vec["typed_data"]),
                                 EIP712, HashFunction.NOT_APPLICABLE)
    message = err.value.message
    assert "HASH_FUNCTION_KECCAK256" in message and "HASH_FUNCTION_NO_OP" in message
    assert "HASH_FUNCTION_NOT_APPLICABLE does not apply" in message
    assert "SHA256" not in message
    assert err.value.to_wire()["code"] == 3


def test_hex_payload_accepts_an_0x_prefix() -> None:
    key = b"\x03" * 32
    a = signing.sign_raw_payload(Curve.SECP256K1, key, "0x" + "11" * 32, HEX, HashFunction.NO_OP)
    b = signing.sign_raw_payload(Curve.SECP256K1, key, "11" * 32, HEX, HashFunction.NO_OP)
    assert a == b


def test_signature_to_wire_has_r_s_v() -> None:
    sig = signing.Signature(r="a" * 64, s="b" * 64, v="01")
    assert sig.to_wire() == {"r": "a" * 64, "s": "b" * 64, "v": "01"}


# --- standalone keys ------------------------------------------------------------------


@pytest.mark.parametrize("curve", [Curve.SECP256K1, Curve.ED25519])
def test_generated_private_keys_sign_verifiably(curve: Curve) -> None:
    private = signing.generate_private_key(curve)
    public = signing.public_key_from_private(curve, private)
    if curve is Curve.SECP256K1:
        sig = signing.sign_raw_payload(curve, private, "00" * 32, HEX, HashFunction.NO_OP)
        recovered = coincurve.PublicKey.from_signature_and_message(
            bytes.fromhex(sig.r + sig.s) + bytes([int(sig.v, 16)]), b"\x00" * 32, hasher=None
        )
        assert recovered.format() == public
    else:
        sig = signing.sign_raw_payload(curve, private, "00", HEX, HashFunction.NOT_APPLICABLE)
        nacl.signing.VerifyKey(public).verify(b"\x00", bytes.fromhex(sig.r + sig.s))


def test_public_key_from_private_rejects_bad_keys() -> None:
    with pytest.raises(InvalidRequest):
        signing.public_key_from_private(Curve.SECP256K1, b"\x00" * 32)
    with pytest.raises(InvalidRequest):
        signing.public_key_from_private(Curve.ED25519, b"\x01" * 31)
    with pytest.raises(InvalidRequest):
        signing.generate_private_key(Curve.P256)


def test_eip712_digest_accepts_the_viem_serialisation_variants() -> None:
    vec = EIP["eip712_mail"]
    no_domain_type = json.loads(json.dumps(vec["typed_data"]))
    del no_domain_type["types"]["EIP712Domain"]
    string_chain = json.loads(json.dumps(vec["typed_data"]))
    string_chain["domain"]["chainId"] = "1"
    for variant in (no_domain_type, string_chain):
        assert signing.eip712_digest(json.dumps(variant)).hex() == vec["digest"]


@pytest.mark.parametrize("vector", ECDSA["vectors"] + ECDSA["k_only"]["vectors"],
                         ids=lambda v: v["message"][:20])
def test_secp256k1_nonce_is_the_published_rfc6979_k(vector: dict[str, Any]) -> None:
    """r must be the x coordinate of k·G for the published deterministic nonce k."""
    key = bytes.fromhex(vector["d"].rjust(64, "0"))
    sig = signing.sign_raw_payload(
        Curve.SECP256K1, key, vector["message"], TEXT, HashFunction.SHA256
    )
    k_point = coincurve.PrivateKey(bytes.fromhex(vector["k"])).public_key.format(compressed=True)
    assert int(sig.r, 16) == int.from_bytes(k_point[1:], "big") % N
