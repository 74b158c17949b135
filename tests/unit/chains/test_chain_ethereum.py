"""Unsigned Ethereum transactions: decoding every envelope, the policy view, signing."""

from __future__ import annotations

import coincurve
import pytest
import rlp
from eth_account import Account

from infra.chains.base import InvalidTransaction, Signer
from infra.chains.ethereum import decode
from infra.crypto.addresses import AddressFormat, Curve
from infra.errors import InvalidRequest

# EIP-155's own example: the signing data of a legacy transfer on chain 1 and the signed result.
EIP155_UNSIGNED = (
    "ec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000"
    "80018080"
)
EIP155_SIGNED = (
    "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000"
    "8025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f76"
    "1aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"
)
KEY = bytes.fromhex("46" * 32)
SENDER = Account.from_key(KEY).address
TO = bytes.fromhex("35" * 20)
# Serialized by viem 2.57 serializeTransaction (the transaction: chain 11155111,
# to 0x…dEaD, value 1, gas 21000), and its EIP-4844 (no sidecar) and EIP-7702 siblings.
VIEM_EIP1559 = ("02ea83aa36a707843b9aca0084b2d05e0082520894000000000000000000000000000000000000dead"
                "0180c0")
VIEM_EIP4844 = ("03f84583aa36a707010382520894000000000000000000000000000000000000dead0180c005e1a001"
                "ababababababababababababababababababababababababababababababab")
VIEM_EIP7702 = ("04f88383aa36a707010382520894000000000000000000000000000000000000dead0180c0f85ff85d"
                "83aa36a79411111111111111111111111111111111111111110801a0" + "11" * 32 + "a0"
                + "22" * 32)


def _target(fmt: AddressFormat = AddressFormat.ETHEREUM, curve: Curve = Curve.SECP256K1) -> Signer:
    public = coincurve.PrivateKey(KEY).public_key.format(True)
    return Signer(curve, fmt, True, public, SENDER)


def test_eip155_example_decodes_and_signs_to_the_published_bytes() -> None:
    tx = decode("0x" + EIP155_UNSIGNED)
    assert tx.tx_type == 0
    assert tx.sign(KEY) == EIP155_SIGNED


def test_legacy_without_chain_id_signs_with_v_27_or_28() -> None:
    unsigned = rlp.encode([0, 10**9, 21000, TO, 1, b""]).hex()
    signed = decode(unsigned).sign(KEY)
    assert rlp.decode(bytes.fromhex(signed))[6] in (b"\x1b", b"\x1c")
    assert Account.recover_transaction("0x" + signed) == SENDER


@pytest.mark.parametrize("unsigned", [VIEM_EIP1559, VIEM_EIP4844, VIEM_EIP7702])
def test_viem_serialized_transactions_with_a_to_sign_and_recover(unsigned: str) -> None:
    # Regression (issue 14): every transaction with a `to` crashed inside eth-account.
    tx = decode("0x" + unsigned)
    tx.accept(_target())
    signed = tx.sign(KEY)
    assert signed[:2] == unsigned[:2] and not signed.startswith("0x")
    assert Account.recover_transaction("0x" + signed) == SENDER


def test_policy_view_of_a_legacy_transaction() -> None:
    view = decode(EIP155_UNSIGNED).policy_view("0xAbC")
    assert view == {
        "from": "0xabc", "to": "0x" + "35" * 20, "data": "0x", "value": 10**18, "gas": 21000,
        "gas_price": 20 * 10**9, "chain_id": 1, "nonce": 9, "type": "LEGACY",
    }  # fmt: skip


def test_eip1559_view_and_recovery() -> None:
    fields = [11155111, 7, 10**9, 3 * 10**9, 60000, TO, 5, bytes.fromhex("a9059cbb00"), []]
    tx = decode("02" + rlp.encode(fields).hex())
    view = tx.policy_view()
    assert (view["type"], view["chain_id"], view["nonce"]) == ("TYPE_2", 11155111, 7)
    assert view["data"][0:10] == "0xa9059cbb"
    assert view["gas_price"] == view["max_fee_per_gas"] == 3 * 10**9
    assert Account.recover_transaction("0x" + tx.sign(KEY)) == SENDER


def test_eip2930_transaction_keeps_its_access_list() -> None:
    access = [[TO, [bytes(32)]]]
    tx = decode("01" + rlp.encode([1, 0, 10**9, 30000, TO, 0, b"", access]).hex())
    assert tx.fields["access_list"] == [{"address": "0x" + "35" * 20,
                                         "storage_keys": ["0x" + "00" * 32]}]
    assert Account.recover_transaction("0x" + tx.sign(KEY)) == SENDER


def test_blob_and_authorization_variables() -> None:
    blob = decode(VIEM_EIP4844).policy_variables(_target())["eth"]
    assert blob["tx"]["type"] == "TYPE_3" and blob["tx"]["max_fee_per_blob_gas"] == 5
    assert blob["tx"]["from"] == SENDER.lower()
    assert "eip_7702_authorization" not in blob
    auth = decode(VIEM_EIP7702).policy_variables(None)["eth"]
    assert auth["tx"]["type"] == "TYPE_4"
    assert auth["eip_7702_authorization"] == {
        "address": "0x" + "11" * 20, "chain_id": 11155111, "nonce": 8}


def test_two_authorizations_leave_the_variable_out() -> None:
    one = [11155111, bytes.fromhex("11" * 20), 8, 1, 5, 6]
    items = [1, 0, 1, 3, 21000, TO, 0, b"", [], [one, one]]
    view = decode("04" + rlp.encode(items).hex()).policy_variables(None)["eth"]
    assert "eip_7702_authorization" not in view


def test_wrong_curve_and_wrong_chain_accounts_are_refused() -> None:
    tx = decode(VIEM_EIP1559)
    with pytest.raises(InvalidRequest, match="CURVE_ED25519 key"):
        tx.accept(_target(AddressFormat.SOLANA, Curve.ED25519))
    with pytest.raises(InvalidRequest, match="not an account of Ethereum; sign TRANSACTION_TYPE_ETHEREUM"):
        tx.accept(_target(AddressFormat.TRON))


@pytest.mark.parametrize(
    ("unsigned", "fragment"),
    [
        ("", "empty"),
        ("zz", "must be hex"),
        ("05" + rlp.encode([1]).hex(), "type 5 is not supported"),
        ("c0", "6 fields"),
        (rlp.encode([1, 2, 3, TO, 4, b"", 1, 1, 0]).hex(), "EIP-155 tail"),
        (rlp.encode([1, 2, 3, b"\x01\x02", 4, b""]).hex(), "empty (contract creation) or 20 bytes"),
        (rlp.encode([b"\x00\x01", 2, 3, TO, 4, b""]).hex(), "leading zero"),
        ("02" + rlp.encode([1, 2, 3]).hex(), "has 9 fields"),
        ("02" + rlp.encode([1, 0, 1, 1, 1, TO, 0, b"", [[TO]]]).hex(), "accessList"),
        ("f8", "not valid RLP"),
        (VIEM_EIP1559[:-6], "not valid RLP"),
        ("0x02" + rlp.encode(b"abc").hex(), "must be an RLP list"),
        ("03" + rlp.encode([1, 0, 1, 1, 1, b"", 0, b"", [], 1, [b"\x01" * 32]]).hex(),
         "must be a 20-byte address"),
        ("03" + rlp.encode([[1], [], [], []]).hex(), "without the sidecar"),
        ("03" + rlp.encode([1, 0, 1, 1, 1, TO, 0, b"", [], 1, [b"\x02" * 32]]).hex(),
         "version 0x01"),
        ("04" + rlp.encode([1, 0, 1, 1, 1, TO, 0, b"", [], []]).hex(), "at least one"),
        ("04" + rlp.encode([1, 0, 1, 1, 1, TO, 0, b"", [], [[1, TO, 0]]]).hex(),
         "sign the authorizations first"),
    ],
)
def test_malformed_transactions_are_invalid_requests(unsigned: str, fragment: str) -> None:
    with pytest.raises(InvalidTransaction) as refused:
        decode(unsigned)
    assert fragment in refused.value.message
    assert refused.value.to_wire()["code"] == 3
