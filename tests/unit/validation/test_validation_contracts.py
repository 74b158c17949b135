"""Ethereum ABI and Solana IDL validation (infra.validation.contract_interfaces)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.errors import InvalidRequest
from infra.validation.contract_interfaces import (
    MAX_INTERFACE_BYTES,
    InvalidContractInterface,
    is_abi_type,
    validate_contract_address,
    validate_interface,
)

ETH = "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM"
SOL = "SMART_CONTRACT_INTERFACE_TYPE_SOLANA"

ERC20_ABI: list[dict[str, Any]] = [
    {
        "type": "constructor",
        "inputs": [{"name": "supply", "type": "uint256"}],
        "stateMutability": "nonpayable",
    },
    {
        "type": "function",
        "name": "transfer",
        "stateMutability": "nonpayable",
        "inputs": [{"name": "to", "type": "address"}, {"name": "amount", "type": "uint256"}],
        "outputs": [{"name": "", "type": "bool"}],
    },
    {
        "name": "balanceOf",
        "constant": True,
        "inputs": [{"name": "who", "type": "address"}],
        "outputs": [{"name": "", "type": "uint256"}],
    },  # legacy entry: no type, no mutability
    {
        "type": "function",
        "name": "swap",
        "stateMutability": "payable",
        "inputs": [
            {
                "name": "route",
                "type": "tuple[]",
                "internalType": "struct Route[]",
                "components": [
                    {"name": "pool", "type": "address"},
                    {"name": "fee", "type": "uint24"},
                    {"name": "data", "type": "bytes"},
                    {
                        "name": "hops",
                        "type": "tuple[2]",
                        "components": [{"name": "x", "type": "bytes32"}],
                    },
                ],
            }
        ],
        "outputs": [],
    },
    {
        "type": "event",
        "name": "Transfer",
        "anonymous": False,
        "inputs": [
            {"name": "from", "type": "address", "indexed": True},
            {"name": "to", "type": "address", "indexed": True},
            {"name": "value", "type": "uint256", "indexed": False},
        ],
    },
    {
        "type": "error",
        "name": "InsufficientBalance",
        "inputs": [{"name": "needed", "type": "uint256"}],
    },
    {"type": "receive", "stateMutability": "payable"},
    {"type": "fallback", "stateMutability": "nonpayable"},
]

LEGACY_IDL: dict[str, Any] = {
    "version": "0.1.0",
    "name": "counter",
    "instructions": [
        {
            "name": "initialize",
            "accounts": [
                {"name": "counter", "isMut": True, "isSigner": True},
                {
                    "name": "group",
                    "accounts": [{"name": "inner", "isMut": False, "isSigner": False}],
                },
            ],
            "args": [
                {"name": "start", "type": "u64"},
                {"name": "owners", "type": {"vec": "publicKey"}},
                {"name": "memo", "type": {"option": "string"}},
                {"name": "seed", "type": {"array": ["u8", 32]}},
                {"name": "config", "type": {"defined": "Config"}},
            ],
        },
    ],
    "accounts": [
        {
            "name": "Counter",
            "type": {"kind": "struct", "fields": [{"name": "count", "type": "u64"}]},
        }
    ],
    "types": [{"name": "Config", "type": {"kind": "enum", "variants": [{"name": "A"}]}}],
    "errors": [{"code": 6000, "name": "Overflow", "msg": "overflow"}],
}

ANCHOR_030_IDL: dict[str, Any] = {
    "address": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    "metadata": {"name": "counter", "version": "0.1.0", "spec": "0.1.0"},
    "instructions": [
        {
            "name": "increment",
            "discriminator": [11, 18, 104, 9, 104, 174, 59, 33],
            "accounts": [
                {"name": "counter", "writable": True},
                {"name": "authority", "signer": True},
            ],
            "args": [
                {"name": "by", "type": "u32"},
                {"name": "who", "type": "pubkey"},
                {"name": "cfg", "type": {"defined": {"name": "Config"}}},
            ],
        },
    ],
    "accounts": [{"name": "Counter", "discriminator": [1, 2, 3, 4, 5, 6, 7, 8]}],
    "types": [
        {"name": "Config", "type": {"kind": "struct", "fields": ["u8", "bool"]}},
        {"name": "Alias", "type": {"kind": "type", "alias": {"vec": "u8"}}},
    ],
    "events": [{"name": "Incremented", "discriminator": [9, 9, 9, 9, 9, 9, 9, 9]}],
}


def test_a_realistic_abi_is_accepted_and_returned_parsed() -> None:
    assert validate_interface(ETH, json.dumps(ERC20_ABI)) == ERC20_ABI


@pytest.mark.parametrize("idl", [LEGACY_IDL, ANCHOR_030_IDL], ids=["legacy", "anchor-0.30"])
def test_both_anchor_idl_layouts_are_accepted(idl: dict[str, Any]) -> None:
    assert validate_interface(SOL, json.dumps(idl)) == idl


@pytest.mark.parametrize(
    "type_name",
    [
        "uint256",
        "int8",
        "uint",
        "address[]",
        "bytes32[2][]",
        "bytes",
        "string",
        "bool",
        "fixed128x18",
        "ufixed",
        "function",
    ],
)
def test_elementary_abi_types(type_name: str) -> None:
    assert is_abi_type(type_name)


@pytest.mark.parametrize(
    "type_name",
    [
        "uint7",
        "uint264",
        "int0",
        "bytes0",
        "bytes33",
        "address[0]",
        "address[",
        "tuple",
        "fixed8x81",
        "uint08",
        "Address",
        "uint256[-1]",
    ],
)
def test_invalid_abi_types(type_name: str) -> None:
    assert not is_abi_type(type_name)


def _bad_abi(entry: dict[str, Any]) -> str:
    return json.dumps([*ERC20_ABI[:2], entry])


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"type": "function", "name": "f", "inputs": [{"name": "a", "type": "uint7"}]},
            r"entry 2 \(function 'f'\): input 0: invalid type 'uint7'",
        ),
        ({"type": "function", "inputs": []}, "name must be an identifier"),
        (
            {"type": "function", "name": "f", "stateMutability": "readonly"},
            "unknown stateMutability 'readonly'",
        ),
        ({"type": "modifier", "name": "m"}, "unknown type 'modifier'"),
        (
            {"type": "function", "name": "f", "inputs": [{"name": "t", "type": "tuple"}]},
            "tuple type needs a components array",
        ),
        ({"type": "function", "name": "f", "inputs": {"a": "uint256"}}, "inputs must be an array"),
        (
            {"type": "event", "name": "E", "inputs": [{"type": "uint256", "indexed": "yes"}]},
            "indexed must be a boolean",
        ),
        ({"type": "event", "name": "E", "outputs": [{"type": "uint256"}]}, "event has no outputs"),
        ({"type": "receive", "stateMutability": "view"}, "receive must be payable"),
        ({"type": "function", "name": "f", "inputs": [{"name": "a"}]}, "type is required"),
    ],
)
def test_abi_errors_say_where_and_why(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidContractInterface, match=message) as info:
        validate_interface(ETH, _bad_abi(entry))
    assert info.value.message.startswith("invalid Ethereum ABI: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ('{"abi": []}', "expected a JSON array of ABI entries"),
        ("[]", "the ABI has no entries"),
        ("[1]", "entry 0: expected a JSON object"),
    ],
)
def test_abi_top_level_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidContractInterface, match=message):
        validate_interface(ETH, text)


def _idl_with(**changes: Any) -> str:
    return json.dumps({**LEGACY_IDL, **changes})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (json.dumps(ERC20_ABI), "expected a JSON object"),
        (_idl_with(name=None), "program name is missing"),
        (_idl_with(instructions=None), "instructions must be an array"),
        (
            _idl_with(
                instructions=[{"name": "x", "accounts": [], "args": [{"name": "a", "type": "u63"}]}]
            ),
            r"instruction 'x' arg 'a': unknown type 'u63'",
        ),
        (_idl_with(instructions=[{"name": "x", "args": []}]), "accounts must be an array"),
        (
            _idl_with(
                instructions=[{"name": "x", "accounts": [], "args": [], "discriminator": [256]}]
            ),
            "discriminator must be",
        ),
        (
            _idl_with(
                instructions=[
                    {
                        "name": "x",
                        "accounts": [],
                        "args": [{"name": "a", "type": {"array": ["u8"]}}],
                    }
                ]
            ),
            r"array must be \[type, length\]",
        ),
        (
            _idl_with(
                instructions=[
                    {"name": "x", "accounts": [], "args": [{"name": "a", "type": {"map": "u8"}}]}
                ]
            ),
            "unknown type 'map'",
        ),
        (_idl_with(types=[{"name": "T", "type": {"kind": "union"}}]), "unknown type kind"),
        (_idl_with(errors=[{"name": "E"}]), r"errors\[0\]"),
    ],
)
def test_idl_errors_say_where_and_why(text: str, message: str) -> None:
    with pytest.raises(InvalidContractInterface, match=message) as info:
        validate_interface(SOL, text)
    assert info.value.message.startswith("invalid Solana IDL: ")


def test_interfaces_over_400kb_are_rejected() -> None:
    entry = {"type": "function", "name": "f" * 1000, "inputs": [], "outputs": []}
    text = json.dumps([entry] * (MAX_INTERFACE_BYTES // 1000 + 1))
    with pytest.raises(InvalidContractInterface, match="larger than 400kb"):
        validate_interface(ETH, text)


def test_unknown_interface_type_is_rejected() -> None:
    with pytest.raises(InvalidRequest, match="unknown smart contract interface type"):
        validate_interface("SMART_CONTRACT_INTERFACE_TYPE_BITCOIN", "[]")


def test_contract_addresses_fit_their_chain() -> None:
    address = "0x" + "ab" * 20
    assert validate_contract_address(ETH, address) == address
    program = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
    assert validate_contract_address(SOL, program) == program
    assert validate_contract_address(SOL, "11111111111111111111111111111111")
    for kind, bad in [(ETH, "0x1234"), (ETH, program), (SOL, address), (SOL, "0OIl" * 10)]:
        with pytest.raises(InvalidRequest, match="invalid"):
            validate_contract_address(kind, bad)
