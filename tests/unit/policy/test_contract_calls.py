"""Decoding calldata against an Ethereum ABI (``infra.calldata.decode_call``)."""

from __future__ import annotations

from eth_abi import encode
from eth_utils import keccak

from infra.calldata import decode_call

ORDER = {"type": "function", "name": "fill", "stateMutability": "nonpayable", "inputs": [
    {"name": "order", "type": "tuple", "components": [
        {"name": "maker", "type": "address"}, {"name": "salt", "type": "bytes32"}]},
    {"name": "", "type": "uint8[]"},
    {"name": "memo", "type": "bytes"},
], "outputs": []}  # fmt: skip
MAKER = "0x" + "ab" * 20


def test_tuples_arrays_bytes_and_unnamed_arguments() -> None:
    signature = "fill((address,bytes32),uint8[],bytes)"
    data = keccak(text=signature)[:4] + encode(
        ["(address,bytes32)", "uint8[]", "bytes"], [(MAKER, b"\x01" * 32), [1, 2], b"\xbe\xef"])
    call = decode_call([{"type": "event", "name": "fill", "inputs": []}, ORDER], data)
    assert call == {
        "function_name": "fill",
        "function_signature": "0x" + keccak(text=signature)[:4].hex(),
        "contract_call_args": {
            "order": {"maker": "0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB", "salt": "0x" + "01" * 32},
            "1": [1, 2],
            "memo": "0xbeef",
        },
    }


def test_short_or_truncated_calldata_is_not_decoded() -> None:
    selector = keccak(text="fill((address,bytes32),uint8[],bytes)")[:4]
    assert decode_call([ORDER], selector[:3]) is None
    assert decode_call([ORDER], selector + b"\x00" * 5) is None
    assert decode_call({"not": "a list"}, selector) is None
