"""Smart contract interfaces: Ethereum ABI JSON and Solana (Anchor) IDL JSON.

``create_smart_contract_interface`` stores an interface that the policy engine later uses to
decode calldata / instructions, so it must be well formed when stored. The checks here are
structural (shape, names, type strings); they never execute anything. Every message says
where the problem is (``entry 3 (function 'transfer'): input 0 ...``).

Facts used: the Solidity ABI JSON specification (entry types, ``stateMutability`` values,
elementary type grammar, tuple ``components``) and the Anchor IDL format (legacy ``name`` /
``version`` at top level, or the 0.30 ``address`` + ``metadata`` form with discriminators).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from infra.errors import InvalidRequest

#: The swagger says "ABI/IDL as a JSON string. Limited to 400kb".
MAX_INTERFACE_BYTES: Final = 400 * 1024
MAX_LABEL_LENGTH: Final = 256
MAX_NESTING: Final = 32


class InterfaceType(StrEnum):
    """``v1SmartContractInterfaceType``."""

    ETHEREUM = "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM"
    SOLANA = "SMART_CONTRACT_INTERFACE_TYPE_SOLANA"


class InvalidContractInterface(InvalidRequest):
    """An ABI or IDL that is not well formed (400)."""

    code = "invalid_contract_interface"


# --------------------------------------------------------------------------- entry point


def validate_interface(interface_type: str, text: str) -> Any:
    """Validate ``smartContractInterface`` for its ``type``; return the parsed JSON.

    Raises:
        InvalidRequest: unknown type.
        InvalidContractInterface: too large, not JSON, or not a valid ABI / IDL.
    """
    kind = interface_type_of(interface_type)
    if not isinstance(text, str) or not text.strip():
        raise InvalidContractInterface(
            "smartContractInterface is required", field="smartContractInterface"
        )
    if len(text.encode("utf-8")) > MAX_INTERFACE_BYTES:
        raise InvalidContractInterface(
            f"smartContractInterface is larger than {MAX_INTERFACE_BYTES // 1024}kb",
            field="smartContractInterface",
        )
    what = "Ethereum ABI" if kind is InterfaceType.ETHEREUM else "Solana IDL"
    try:
        parsed = json.loads(text)
    except ValueError as ex:
        raise InvalidContractInterface(
            f"invalid {what}: not valid JSON ({ex})", field="smartContractInterface"
        ) from ex
    if kind is InterfaceType.ETHEREUM:
        validate_ethereum_abi(parsed)
    else:
        validate_solana_idl(parsed)
    return parsed


def interface_type_of(value: str) -> InterfaceType:
    """The :class:`InterfaceType` for a wire value.

    Raises:
        InvalidRequest: ``value`` is not in the enum.
    """
    try:
        return InterfaceType(value)
    except ValueError as ex:
        raise InvalidRequest(
            f"unknown smart contract interface type {value!r}", field="type"
        ) from ex


def validate_contract_address(interface_type: str, address: str) -> str:
    """Check ``smartContractAddress``: a 0x-hex address or a base58 Solana program id.

    Raises:
        InvalidRequest: the address does not fit the interface type.
    """
    kind = interface_type_of(interface_type)
    if not isinstance(address, str) or not address:
        raise InvalidRequest("smartContractAddress is required", field="smartContractAddress")
    if kind is InterfaceType.ETHEREUM:
        if not re.fullmatch(r"0x[0-9a-fA-F]{40}", address):
            raise InvalidRequest(
                f"invalid Ethereum contract address {address!r}: expected 0x and 40 hex digits",
                field="smartContractAddress",
            )
    elif not _is_solana_pubkey(address):
        raise InvalidRequest(
            f"invalid Solana program id {address!r}: expected a base58 32-byte public key",
            field="smartContractAddress",
        )
    return address


_B58: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _is_solana_pubkey(text: str) -> bool:
    if not 32 <= len(text) <= 44 or any(c not in _B58 for c in text):
        return False
    number = 0
    for char in text:
        number = number * 58 + _B58.index(char)
    leading_zeros = len(text) - len(text.lstrip("1"))
    size = (number.bit_length() + 7) // 8 + leading_zeros
    return size == 32


# --------------------------------------------------------------------------- Ethereum ABI


_ENTRY_TYPES: Final = frozenset(
    {"function", "constructor", "receive", "fallback", "event", "error"}
)
_MUTABILITY: Final = frozenset({"pure", "view", "nonpayable", "payable"})
_ARRAY_SUFFIX: Final = re.compile(r"\[([1-9][0-9]*)?\]$")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def _abi_error(where: str, message: str) -> InvalidContractInterface:
    return InvalidContractInterface(
        f"invalid Ethereum ABI: {where}{message}", field="smartContractInterface"
    )


def is_abi_type(type_name: str) -> bool:
    """Whether ``type_name`` is a Solidity ABI type string (``tuple`` bases excluded).

    Accepts elementary types with any array suffixes: ``uint256``, ``bytes32[]``,
    ``address[2][]``, ``fixed128x18``, ``function``.
    """
    base = _strip_arrays(type_name)
    return base is not None and base != "tuple" and _is_elementary(base)


def _strip_arrays(type_name: str) -> str | None:
    base = type_name
    while base.endswith("]"):
        match = _ARRAY_SUFFIX.search(base)
        if match is None:
            return None
        base = base[: match.start()]
    return base


def _is_elementary(base: str) -> bool:
    if base in ("address", "bool", "string", "bytes", "function", "int", "uint"):
        return True
    if base in ("fixed", "ufixed"):
        return True
    match = re.fullmatch(r"u?int([0-9]+)", base)
    if match:
        bits = int(match.group(1))
        return match.group(1)[0] != "0" and 8 <= bits <= 256 and bits % 8 == 0
    match = re.fullmatch(r"bytes([0-9]+)", base)
    if match:
        return match.group(1)[0] != "0" and 1 <= int(match.group(1)) <= 32
    match = re.fullmatch(r"u?fixed([0-9]+)x([0-9]+)", base)
    if match:
        bits, decimals = int(match.group(1)), int(match.group(2))
        return 8 <= bits <= 256 and bits % 8 == 0 and 0 < decimals <= 80
    return False


def validate_ethereum_abi(abi: Any) -> None:
    """Validate a parsed ABI: a JSON array of function/constructor/event/error/... entries.

    Raises:
        InvalidContractInterface: with the entry and field at fault.
    """
    if not isinstance(abi, list):
        raise _abi_error("", "expected a JSON array of ABI entries")
    if not abi:
        raise _abi_error("", "the ABI has no entries")
    for index, entry in enumerate(abi):
        _check_abi_entry(index, entry)


def _check_abi_entry(index: int, entry: Any) -> None:
    if not isinstance(entry, Mapping):
        raise _abi_error(f"entry {index}: ", "expected a JSON object")
    kind = entry.get("type", "function")
    if kind not in _ENTRY_TYPES:
        raise _abi_error(
            f"entry {index}: ", f"unknown type {kind!r} (expected one of {sorted(_ENTRY_TYPES)})"
        )
    name = entry.get("name")
    where = f"entry {index} ({kind}{f' {name!r}' if isinstance(name, str) else ''}): "
    if kind in ("function", "event", "error") and (
        not isinstance(name, str) or not _IDENTIFIER.fullmatch(name)
    ):
        raise _abi_error(where, "name must be an identifier")
    mutability = entry.get("stateMutability")
    if mutability is not None and mutability not in _MUTABILITY:
        raise _abi_error(where, f"unknown stateMutability {mutability!r}")
    if kind == "receive" and mutability not in (None, "payable"):
        raise _abi_error(where, "receive must be payable")
    if kind == "receive" and entry.get("inputs"):
        raise _abi_error(where, "receive takes no inputs")
    for field in ("inputs", "outputs"):
        params = entry.get(field, [])
        if not isinstance(params, list):
            raise _abi_error(where, f"{field} must be an array")
        if field == "outputs" and params and kind != "function":
            raise _abi_error(where, f"{kind} has no outputs")
        for position, param in enumerate(params):
            _check_abi_param(f"{where}{field[:-1]} {position}", param, kind == "event", 0)
    if "anonymous" in entry and not isinstance(entry["anonymous"], bool):
        raise _abi_error(where, "anonymous must be a boolean")


def _check_abi_param(where: str, param: Any, is_event: bool, depth: int) -> None:
    if depth > MAX_NESTING:
        raise _abi_error("", f"{where}: tuples nested too deeply")
    if not isinstance(param, Mapping):
        raise _abi_error("", f"{where}: expected a JSON object")
    name = param.get("name", "")
    if not isinstance(name, str):
        raise _abi_error("", f"{where}: name must be a string")
    type_name = param.get("type")
    if not isinstance(type_name, str) or not type_name:
        raise _abi_error("", f"{where}: type is required")
    base = _strip_arrays(type_name)
    if base is None:
        raise _abi_error("", f"{where}: invalid type {type_name!r}")
    if base == "tuple":
        components = param.get("components")
        if not isinstance(components, list):
            raise _abi_error("", f"{where}: tuple type needs a components array")
        for position, component in enumerate(components):
            _check_abi_param(f"{where} component {position}", component, False, depth + 1)
    elif not _is_elementary(base):
        raise _abi_error("", f"{where}: invalid type {type_name!r}")
    if is_event and "indexed" in param and not isinstance(param["indexed"], bool):
        raise _abi_error("", f"{where}: indexed must be a boolean")
    if "internalType" in param and not isinstance(param["internalType"], str):
        raise _abi_error("", f"{where}: internalType must be a string")


# --------------------------------------------------------------------------- Solana IDL


_IDL_PRIMITIVES: Final = frozenset(
    {
        "bool",
        "u8",
        "i8",
        "u16",
        "i16",
        "u32",
        "i32",
        "f32",
        "u64",
        "i64",
        "f64",
        "u128",
        "i128",
        "u256",
        "i256",
        "bytes",
        "string",
        "pubkey",
        "publicKey",
    }
)


def _idl_error(where: str, message: str) -> InvalidContractInterface:
    return InvalidContractInterface(
        f"invalid Solana IDL: {where}{message}", field="smartContractInterface"
    )


def validate_solana_idl(idl: Any) -> None:
    """Validate a parsed Anchor IDL (legacy or 0.30+ layout).

    Requires a program name (top-level ``name`` or ``metadata.name``) and an ``instructions``
    array whose entries have a ``name``, an ``accounts`` array and typed ``args``; optional
    ``accounts``, ``types``, ``events`` and ``errors`` sections are checked when present.

    Raises:
        InvalidContractInterface: with the section and entry at fault.
    """
    if not isinstance(idl, Mapping):
        raise _idl_error("", "expected a JSON object")
    metadata = idl.get("metadata")
    name = idl.get("name")
    if name is None and isinstance(metadata, Mapping):
        name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise _idl_error("", "the program name is missing (name or metadata.name)")
    instructions = idl.get("instructions")
    if not isinstance(instructions, list):
        raise _idl_error("", "instructions must be an array")
    for index, instruction in enumerate(instructions):
        _check_instruction(index, instruction)
    for section in ("accounts", "types", "events"):
        entries = idl.get(section, [])
        if not isinstance(entries, list):
            raise _idl_error("", f"{section} must be an array")
        for index, entry in enumerate(entries):
            _check_named_definition(f"{section}[{index}]", entry)
    errors = idl.get("errors", [])
    if not isinstance(errors, list):
        raise _idl_error("", "errors must be an array")
    for index, error in enumerate(errors):
        if not isinstance(error, Mapping) or not isinstance(error.get("code"), int):
            raise _idl_error(f"errors[{index}]: ", "expected {code: integer, name, msg?}")
        if not isinstance(error.get("name"), str):
            raise _idl_error(f"errors[{index}]: ", "name must be a string")


def _check_instruction(index: int, instruction: Any) -> None:
    where = f"instructions[{index}]"
    if not isinstance(instruction, Mapping):
        raise _idl_error(f"{where}: ", "expected a JSON object")
    name = instruction.get("name")
    if not isinstance(name, str) or not name:
        raise _idl_error(f"{where}: ", "name is required")
    where = f"instruction {name!r}"
    _check_discriminator(where, instruction)
    accounts = instruction.get("accounts")
    if not isinstance(accounts, list):
        raise _idl_error(f"{where}: ", "accounts must be an array")
    for position, account in enumerate(accounts):
        _check_instruction_account(f"{where} account {position}", account, 0)
    args = instruction.get("args")
    if not isinstance(args, list):
        raise _idl_error(f"{where}: ", "args must be an array")
    for position, arg in enumerate(args):
        if not isinstance(arg, Mapping) or not isinstance(arg.get("name"), str):
            raise _idl_error(f"{where} arg {position}: ", "expected {name, type}")
        _check_idl_type(f"{where} arg {arg['name']!r}", arg.get("type"), 0)


def _check_instruction_account(where: str, account: Any, depth: int) -> None:
    if depth > MAX_NESTING or not isinstance(account, Mapping):
        raise _idl_error(f"{where}: ", "expected a JSON object")
    if not isinstance(account.get("name"), str):
        raise _idl_error(f"{where}: ", "name is required")
    if "accounts" in account:  # a composite (nested) accounts group
        nested = account["accounts"]
        if not isinstance(nested, list):
            raise _idl_error(f"{where}: ", "accounts must be an array")
        for position, inner in enumerate(nested):
            _check_instruction_account(f"{where}.{position}", inner, depth + 1)


def _check_discriminator(where: str, entry: Mapping[str, Any]) -> None:
    if "discriminator" not in entry:
        return
    value = entry["discriminator"]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in value)
    ):
        raise _idl_error(f"{where}: ", "discriminator must be an array of bytes (0-255)")


def _check_named_definition(where: str, entry: Any) -> None:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
        raise _idl_error(f"{where}: ", "expected an object with a name")
    where = f"{where} {entry['name']!r}"
    _check_discriminator(where, entry)
    if "type" in entry:
        _check_type_definition(where, entry["type"])


def _check_type_definition(where: str, definition: Any) -> None:
    if not isinstance(definition, Mapping):
        raise _idl_error(f"{where}: ", "type must be an object")
    kind = definition.get("kind")
    if kind == "struct":
        fields = definition.get("fields", [])
        if not isinstance(fields, list):
            raise _idl_error(f"{where}: ", "struct fields must be an array")
        for position, field in enumerate(fields):
            if isinstance(field, Mapping):
                _check_idl_type(
                    f"{where} field {field.get('name', position)!r}", field.get("type"), 0
                )
            else:  # tuple struct: bare types
                _check_idl_type(f"{where} field {position}", field, 0)
    elif kind == "enum":
        variants = definition.get("variants")
        if not isinstance(variants, list):
            raise _idl_error(f"{where}: ", "enum variants must be an array")
        for position, variant in enumerate(variants):
            if not isinstance(variant, Mapping) or not isinstance(variant.get("name"), str):
                raise _idl_error(f"{where} variant {position}: ", "expected an object with a name")
    elif kind == "type":
        _check_idl_type(f"{where} alias", definition.get("alias"), 0)
    else:
        raise _idl_error(f"{where}: ", f"unknown type kind {kind!r} (struct, enum or type)")


def _check_idl_type(where: str, value: Any, depth: int) -> None:
    if depth > MAX_NESTING:
        raise _idl_error(f"{where}: ", "type nested too deeply")
    if isinstance(value, str):
        if value not in _IDL_PRIMITIVES:
            raise _idl_error(f"{where}: ", f"unknown type {value!r}")
        return
    if not isinstance(value, Mapping) or len(value) != 1:
        raise _idl_error(f"{where}: ", f"invalid type {value!r}")
    ((key, inner),) = value.items()
    if key in ("vec", "option", "coption"):
        _check_idl_type(where, inner, depth + 1)
    elif key == "array":
        if (
            not isinstance(inner, list)
            or len(inner) != 2
            or not ((isinstance(inner[1], int) and inner[1] >= 0) or isinstance(inner[1], Mapping))
        ):
            raise _idl_error(f"{where}: ", "array must be [type, length]")
        _check_idl_type(where, inner[0], depth + 1)
    elif key == "defined":
        if not (isinstance(inner, str) and inner) and not (
            isinstance(inner, Mapping) and isinstance(inner.get("name"), str)
        ):
            raise _idl_error(f"{where}: ", "defined must name a type")
    elif key == "generic":
        if not isinstance(inner, str):
            raise _idl_error(f"{where}: ", "generic must name a parameter")
    else:
        raise _idl_error(f"{where}: ", f"unknown type {key!r}")
