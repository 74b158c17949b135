"""Unsigned Ethereum transactions: decoding, the ``eth.tx`` view, signing."""

from __future__ import annotations

import pytest
import rlp
from eth_account import Account

from infra.ethereum import InvalidTransaction, decode_unsigned_transaction

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
EIP155_KEY = bytes.fromhex("46" * 32)
TO = bytes.fromhex("35" * 20)


def test_eip155_example_decodes_and_signs_to_the_published_bytes() -> None:
    tx = decode_unsigned_transaction("0x" + EIP155_UNSIGNED)
    assert tx.tx_type == 0
    assert tx.sign(EIP155_KEY) == EIP155_SIGNED


def test_policy_view_of_a_legacy_transaction() -> None:
    view = decode_unsigned_transaction(EIP155_UNSIGNED).policy_view("0xAbC")
    assert view == {
        "from": "0xabc", "to": "0x" + "35" * 20, "data": "0x", "value": 10**18, "gas": 21000,
        "gas_price": 20 * 10**9, "chain_id": 1, "nonce": 9, "type": "LEGACY",
    }  # fmt: skip


def test_eip1559_transaction_signs_and_recovers_to_the_key() -> None:
    fields = [11155111, 7, 10**9, 3 * 10**9, 60000, TO, 5, bytes.fromhex("a9059cbb00"), []]
    unsigned = "02" + rlp.encode(fields).hex()
    tx = decode_unsigned_transaction(unsigned)
    view = tx.policy_view()
    assert (view["type"], view["chain_id"], view["nonce"]) == ("TYPE_2", 11155111, 7)
    assert view["data"][0:10] == "0xa9059cbb"
    assert view["gas_price"] == view["max_fee_per_gas"] == 3 * 10**9
    signed = tx.sign(EIP155_KEY)
    assert signed.startswith("02")
    sender = Account.from_key(EIP155_KEY).address
    assert Account.recover_transaction("0x" + signed) == sender


def test_eip2930_transaction_keeps_its_access_list() -> None:
    access = [[TO, [bytes(32)]]]
    unsigned = "01" + rlp.encode([1, 0, 10**9, 30000, TO, 0, b"", access]).hex()
    tx = decode_unsigned_transaction(unsigned)
    assert tx.fields["accessList"] == [{"address": "0x" + "35" * 20,
                                        "storageKeys": ["0x" + "00" * 32]}]
    assert Account.recover_transaction("0x" + tx.sign(EIP155_KEY)) == (
        Account.from_key(EIP155_KEY).address)


@pytest.mark.parametrize(
    ("unsigned", "fragment"),
    [
        ("", "empty"),
        ("zz", "must be hex"),
        ("04" + rlp.encode([1]).hex(), "type 4 is not supported"),
        ("c0", "6 fields"),
        (rlp.encode([1, 2, 3, TO, 4, b"", 1, 1, 0]).hex(), "EIP-155 tail"),
        (rlp.encode([1, 2, 3, b"\x01\x02", 4, b""]).hex(), "to must be empty or 20 bytes"),
        (rlp.encode([b"\x00\x01", 2, 3, TO, 4, b""]).hex(), "leading zero"),
        ("02" + rlp.encode([1, 2, 3]).hex(), "has 9 fields"),
        ("02" + rlp.encode([1, 0, 1, 1, 1, TO, 0, b"", [[TO]]]).hex(), "accessList"),
        ("f8", "not valid RLP"),
        ("0x02" + rlp.encode(b"abc").hex(), "must be an RLP list"),
    ],
)
def test_malformed_transactions_are_invalid_requests(unsigned: str, fragment: str) -> None:
    with pytest.raises(InvalidTransaction) as refused:
        decode_unsigned_transaction(unsigned)
    assert fragment in refused.value.message
    assert refused.value.to_wire()["code"] == 3
