"""Tron transactions: ``raw_data_hex`` decoded for policies, signed as Tron does."""

from __future__ import annotations

import hashlib

import coincurve
import pytest

from infra.chains.base import InvalidTransaction, Signer
from infra.chains.tron import _fields, address, decode
from infra.crypto.addresses import AddressFormat, Curve, derive_address
from infra.errors import InvalidRequest

# Built offline by tronweb 6.5.1 (utils.transaction.txJsonToPb / txPbToRawDataHex / txPbToTxID)
# from a TransferContract of 1000 sun with memo "memo".
RAW = (
    "0A02A2B42208010203040506070840E0A499FFBC3152046D656D6F5A66080112620A2D747970652E676F6F676C"
    "65617069732E636F6D2F70726F746F636F6C2E5472616E73666572436F6E747261637412310A1541928C9AF065"
    "1632157EF27A2CF17CA72C575A4D211215415CBDD86A2FA8DC4BDDD8A8F69DBA48572EEC07FB18E8077080D095"
    "FFBC31"
)
TX_ID = "09ee885308e60f8e8cfb2b31e9be78b8b11ffa39eb83ccc10aa16c3e1caede54"
KEY = bytes.fromhex("11" * 32)
PUBLIC = coincurve.PrivateKey(KEY).public_key.format(True)


def _target(fmt: AddressFormat = AddressFormat.TRON) -> Signer:
    return Signer(Curve.SECP256K1, fmt, True, PUBLIC, derive_address(Curve.SECP256K1, fmt, PUBLIC))


def test_policy_view_of_a_transfer() -> None:
    tx = decode(RAW)
    assert tx.transaction_id() == TX_ID
    assert tx.policy_variables(_target())["tron"]["tx"] == {
        "ref_block_bytes": "a2b4", "ref_block_hash": "0102030405060708",
        "expiration": 1700000060000, "timestamp": 1700000000000, "data": "memo", "fee_limit": 0,
        "contract": [{"type": "TransferContract", "permission_id": 0,
                      "owner_address": "TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY",
                      "to_address": "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8", "amount": 1000}],
    }  # fmt: skip


def test_signed_transaction_is_raw_data_and_a_recoverable_signature() -> None:
    tx = decode("0x" + RAW.lower())
    tx.accept(_target())
    signed = bytes.fromhex(tx.sign(KEY, _target()))
    fields = list(_fields(signed))
    assert fields[0] == (1, bytes.fromhex(RAW))
    number, signature = fields[1]
    assert number == 2 and isinstance(signature, bytes) and len(signature) == 65
    assert signature[64] in (27, 28)
    recoverable = signature[:64] + bytes([signature[64] - 27])
    recovered = coincurve.PublicKey.from_signature_and_message(
        recoverable, bytes.fromhex(TX_ID), hasher=None)
    assert recovered.format(True) == PUBLIC
    assert hashlib.sha256(fields[0][1]).hexdigest() == TX_ID


def test_non_tron_accounts_are_refused() -> None:
    with pytest.raises(InvalidRequest, match="ADDRESS_FORMAT_ETHEREUM account"):
        decode(RAW).accept(_target(AddressFormat.ETHEREUM))


def test_address_rendering() -> None:
    assert address(bytes.fromhex("41928C9AF0651632157EF27A2CF17CA72C575A4D21")) == (
        "TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY")
    assert address(b"\x01\x02") == "0102"


@pytest.mark.parametrize(
    ("unsigned", "fragment"),
    [
        ("zz", "must be hex"),
        (RAW[:-6], "truncated"),
        ("0a02a2b4", "no contract"),
        ("0f", "wire type 7"),
        ("0a" + "02a2b4" + "1241" + "00" * 65, "no contract"),
    ],
)
def test_malformed_tron_transactions(unsigned: str, fragment: str) -> None:
    with pytest.raises(InvalidTransaction, match=fragment):
        decode(unsigned)
