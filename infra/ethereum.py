"""Unsigned Ethereum transactions: decode them, show them to policies, sign them.

``sign_transaction`` with ``TRANSACTION_TYPE_ETHEREUM`` receives the unsigned transaction as
hex: a legacy RLP list (``[nonce, gasPrice, gas, to, value, data]``, optionally with the
EIP-155 ``chainId, 0, 0`` tail) or an EIP-2718 typed envelope of type 1 (EIP-2930) or 2
(EIP-1559). Decoding uses ``rlp``; signing uses ``eth-account`` (both well kept). The policy
view is ``eth.tx`` (PROTOCOL.md §8.3) with lower-case hex and ints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import rlp
from eth_account import Account

from infra.errors import InvalidRequest
from infra.policy.variables import eth_tx_variable

FIELD = "parameters.unsignedTransaction"
_TYPES = {0: "LEGACY", 1: "TYPE_1", 2: "TYPE_2", 3: "TYPE_3", 4: "TYPE_4"}


class InvalidTransaction(InvalidRequest):
    """The unsigned transaction cannot be decoded (400, ``INVALID_TRANSACTION``)."""

    code = "invalid_transaction"
    turnkey_code = "INVALID_TRANSACTION"


@dataclass(frozen=True)
class UnsignedTransaction:
    """A decoded unsigned transaction in ``eth-account``'s dict form."""

    tx_type: int
    fields: dict[str, Any]

    def policy_view(self, sender: str = "") -> dict[str, Any]:
        """``eth.tx`` for policies; ``sender`` is the signing address when known."""
        f = self.fields
        view: dict[str, Any] = {
            "from": sender,
            "to": f.get("to") or "",
            "data": f.get("data") or "0x",
            "value": f.get("value", 0),
            "gas": f.get("gas", 0),
            "nonce": f.get("nonce", 0),
            "type": _TYPES.get(self.tx_type, str(self.tx_type)),
        }
        if "chainId" in f:
            view["chain_id"] = f["chainId"]
        for wire, name in (
            ("gasPrice", "gas_price"),
            ("maxFeePerGas", "max_fee_per_gas"),
            ("maxPriorityFeePerGas", "max_priority_fee_per_gas"),
        ):
            if wire in f:
                view[name] = f[wire]
        return eth_tx_variable(view)

    def sign(self, private_key_secret: bytes) -> str:
        """The signed transaction, hex without ``0x`` (as Turnkey returns it)."""
        signed = Account.sign_transaction(self.fields, private_key_secret)
        return bytes(signed.raw_transaction).hex()


def _int(item: Any, name: str) -> int:
    if not isinstance(item, bytes):
        raise InvalidTransaction(f"transaction field {name} must be a byte string", field=FIELD)
    if item[:1] == b"\x00":
        raise InvalidTransaction(f"transaction field {name} has leading zero bytes", field=FIELD)
    return int.from_bytes(item, "big")


def _address(item: Any) -> str | None:
    if not isinstance(item, bytes) or len(item) not in (0, 20):
        raise InvalidTransaction("transaction field to must be empty or 20 bytes", field=FIELD)
    return "0x" + item.hex() if item else None


def _access_list(item: Any) -> list[dict[str, Any]]:
    if not isinstance(item, list):
        raise InvalidTransaction("accessList must be a list", field=FIELD)
    out = []
    for entry in item:
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not isinstance(entry[1], list)
            or not all(isinstance(k, bytes) and len(k) == 32 for k in entry[1])
        ):
            raise InvalidTransaction("malformed accessList entry", field=FIELD)
        address = _address(entry[0])
        if address is None:
            raise InvalidTransaction("accessList address must be 20 bytes", field=FIELD)
        out.append({"address": address, "storageKeys": ["0x" + k.hex() for k in entry[1]]})
    return out


def _common(items: list[Any], names: tuple[str, ...]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, item in zip(names, items, strict=True):
        if name == "to":
            to = _address(item)
            if to is not None:
                fields["to"] = to
        elif name == "data":
            if not isinstance(item, bytes):
                raise InvalidTransaction("transaction data must be a byte string", field=FIELD)
            fields["data"] = "0x" + item.hex()
        elif name == "accessList":
            fields["accessList"] = _access_list(item)
        else:
            fields[name] = _int(item, name)
    return fields


_LEGACY = ("nonce", "gasPrice", "gas", "to", "value", "data")
_TYPE_1 = ("chainId", "nonce", "gasPrice", "gas", "to", "value", "data", "accessList")
_TYPE_2 = (
    "chainId",
    "nonce",
    "maxPriorityFeePerGas",
    "maxFeePerGas",
    "gas",
    "to",
    "value",
    "data",
    "accessList",
)


def decode_unsigned_transaction(unsigned_hex: str) -> UnsignedTransaction:
    """Decode ``unsignedTransaction`` (hex, ``0x`` optional); raises :class:`InvalidTransaction`."""
    text = unsigned_hex[2:] if unsigned_hex[:2] in ("0x", "0X") else unsigned_hex
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise InvalidTransaction("unsignedTransaction must be hex", field=FIELD) from None
    if not raw:
        raise InvalidTransaction("unsignedTransaction is empty", field=FIELD)
    tx_type, payload = (0, raw) if raw[0] >= 0xC0 else (raw[0], raw[1:])
    if tx_type not in (0, 1, 2):
        raise InvalidTransaction(
            f"Ethereum transaction type {tx_type} is not supported; send a legacy, EIP-2930 "
            "or EIP-1559 transaction",
            field=FIELD,
        )
    try:
        items = rlp.decode(payload, strict=True)
    except Exception:  # rlp raises several DecodingError flavours
        raise InvalidTransaction("unsignedTransaction is not valid RLP", field=FIELD) from None
    if not isinstance(items, list):
        raise InvalidTransaction("unsignedTransaction must be an RLP list", field=FIELD)
    if tx_type == 0:
        return _legacy(items)
    names = _TYPE_1 if tx_type == 1 else _TYPE_2
    if len(items) != len(names):
        raise InvalidTransaction(
            f"a type-{tx_type} transaction has {len(names)} fields, got {len(items)} (send it unsigned)",
            field=FIELD,
        )
    fields = _common(items, names)
    fields["type"] = tx_type
    fields.setdefault("data", "0x")
    return UnsignedTransaction(tx_type, fields)


def _legacy(items: list[Any]) -> UnsignedTransaction:
    if len(items) not in (6, 9):
        raise InvalidTransaction(
            f"a legacy transaction has 6 fields (or 9 with the EIP-155 chain id), got "
            f"{len(items)} (send it unsigned)",
            field=FIELD,
        )
    fields = _common(items[:6], _LEGACY)
    if len(items) == 9:
        if items[7] != b"" or items[8] != b"":
            raise InvalidTransaction("the EIP-155 tail must be chainId, 0, 0", field=FIELD)
        fields["chainId"] = _int(items[6], "chainId")
    return UnsignedTransaction(0, fields)
