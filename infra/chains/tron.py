"""Tron transactions (``TRANSACTION_TYPE_TRON``): decode, show to policies, sign.

``unsignedTransaction`` is a transaction's ``raw_data_hex`` (the protobuf ``Transaction.raw``
tronweb builds; Turnkey's Tron example sends ``unsignedTx.raw_data_hex``). Tron signs the
SHA-256 of those bytes with recoverable secp256k1 ECDSA; the 65-byte signature is ``r ‖ s ‖ v``
with ``v = 27 + recovery id``, as tronweb's ``ECKeySign`` writes it. The answer is the hex of
the signed protobuf ``Transaction{raw_data, signature}``, which ``tronWeb.trx.sendHexTransaction``
and the node's ``wallet/broadcasthex`` accept.

The protobuf reader below is the few lines of the wire format these messages need (varints and
length-delimited fields); it refuses anything it cannot read. Policies see
``tron.tx{ref_block_bytes, ref_block_hash, expiration, timestamp, data, fee_limit, contract}``
(PROTOCOL.md §8.3); contract addresses are base58check (``T…``), ``contract[].data`` is hex,
``data`` (the memo) is its UTF-8 text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import base58

from infra.chains.base import (
    FIELD,
    InvalidTransaction,
    Signer,
    decode_hex,
    require_curve,
    require_formats,
)
from infra.crypto.addresses import AddressFormat, Curve
from infra.crypto.signing import sign_secp256k1

TRANSACTION_TYPE = "TRANSACTION_TYPE_TRON"
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

CONTRACT_TYPES = {
    0: "AccountCreateContract", 1: "TransferContract", 2: "TransferAssetContract",
    4: "VoteWitnessContract", 5: "WitnessCreateContract", 6: "AssetIssueContract",
    8: "WitnessUpdateContract", 9: "ParticipateAssetIssueContract", 10: "AccountUpdateContract",
    11: "FreezeBalanceContract", 12: "UnfreezeBalanceContract", 13: "WithdrawBalanceContract",
    15: "UpdateAssetContract", 16: "ProposalCreateContract", 17: "ProposalApproveContract",
    18: "ProposalDeleteContract", 19: "SetAccountIdContract", 30: "CreateSmartContract",
    31: "TriggerSmartContract", 33: "UpdateSettingContract", 41: "ExchangeCreateContract",
    42: "ExchangeInjectContract", 43: "ExchangeWithdrawContract",
    44: "ExchangeTransactionContract", 45: "UpdateEnergyLimitContract",
    46: "AccountPermissionUpdateContract", 48: "ClearABIContract", 49: "UpdateBrokerageContract",
    54: "FreezeBalanceV2Contract", 55: "UnfreezeBalanceV2Contract",
    56: "WithdrawExpireUnfreezeContract", 57: "DelegateResourceContract",
    58: "UnDelegateResourceContract", 59: "CancelAllUnfreezeV2Contract",
}  # fmt: skip
RESOURCES = {0: "BANDWIDTH", 1: "ENERGY", 2: "TRON_POWER"}


# --- protobuf wire format --------------------------------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise InvalidTransaction("unsignedTransaction has a truncated protobuf varint",
                                     field=FIELD)
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """``(field number, value)`` of one protobuf message; int64 varints come back signed."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise InvalidTransaction("unsignedTransaction has protobuf field number 0", field=FIELD)
        if wire == _VARINT:
            value, pos = _varint(data, pos)
            yield number, value - (1 << 64) if value >= 1 << 63 else value
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise InvalidTransaction("unsignedTransaction has a truncated protobuf field",
                                         field=FIELD)
            yield number, data[pos:pos + size]
            pos += size
        elif wire in (_I64, _I32):
            width = 8 if wire == _I64 else 4
            if pos + width > len(data):
                raise InvalidTransaction("unsignedTransaction has a truncated protobuf field",
                                         field=FIELD)
            yield number, int.from_bytes(data[pos:pos + width], "little")
            pos += width
        else:
            raise InvalidTransaction(f"unsignedTransaction uses protobuf wire type {wire}, which "
                                     "Tron transactions do not", field=FIELD)


def _message(data: bytes) -> dict[int, list[int | bytes]]:
    out: dict[int, list[int | bytes]] = {}
    for number, value in _fields(data):
        out.setdefault(number, []).append(value)
    return out


def _one(msg: dict[int, list[int | bytes]], number: int, kind: type, default: Any) -> Any:
    values = msg.get(number)
    if not values:
        return default
    value = values[-1]
    if not isinstance(value, kind):
        raise InvalidTransaction(f"protobuf field {number} has the wrong wire type", field=FIELD)
    return value


def _length_delimited(value: bytes) -> bytes:
    """The varint length prefix of a length-delimited field."""
    size = len(value)
    out = bytearray()
    while True:
        byte = size & 0x7F
        size >>= 7
        out.append(byte | (0x80 if size else 0))
        if not size:
            return bytes(out)


# --- Tron messages ---------------------------------------------------------------------


def address(raw: bytes) -> str:
    """A 21-byte ``0x41``-prefixed Tron address as base58check (``T…``); other bytes as hex."""
    if len(raw) == 21 and raw[0] == 0x41:
        return str(base58.b58encode_check(raw).decode())
    return raw.hex()


_Field = tuple[int, str, Callable[[Any], Any], type, Any]
_ADDR: Callable[[Any], Any] = address
_INT: Callable[[Any], Any] = int
_RESOURCE: Callable[[Any], Any] = lambda v: RESOURCES.get(v, str(v))  # noqa: E731
_CONTRACT_FIELDS: dict[str, tuple[_Field, ...]] = {
    "TransferContract": ((2, "to_address", _ADDR, bytes, b""), (3, "amount", _INT, int, 0)),
    "TriggerSmartContract": (
        (2, "contract_address", _ADDR, bytes, b""), (3, "call_value", _INT, int, 0),
        (4, "data", bytes.hex, bytes, b""), (5, "call_token_value", _INT, int, 0),
        (6, "token_id", _INT, int, 0),
    ),
    "FreezeBalanceV2Contract": (
        (2, "frozen_balance", _INT, int, 0), (3, "resource", _RESOURCE, int, 0),
    ),
    "UnfreezeBalanceV2Contract": (
        (2, "unfreeze_balance", _INT, int, 0), (3, "resource", _RESOURCE, int, 0),
    ),
    "DelegateResourceContract": (
        (2, "resource", _RESOURCE, int, 0), (3, "balance", _INT, int, 0),
        (4, "receiver_address", _ADDR, bytes, b""), (5, "lock", bool, int, 0),
        (6, "lock_period", _INT, int, 0),
    ),
    "UnDelegateResourceContract": (
        (2, "resource", _RESOURCE, int, 0), (3, "balance", _INT, int, 0),
        (4, "receiver_address", _ADDR, bytes, b""),
    ),
}  # fmt: skip


def _contract(data: bytes) -> dict[str, Any]:
    msg = _message(data)
    type_number = _one(msg, 1, int, 0)
    type_name = CONTRACT_TYPES.get(type_number, f"ContractType{type_number}")
    parameter = _message(_one(msg, 2, bytes, b""))
    value = _message(_one(parameter, 2, bytes, b""))
    contract: dict[str, Any] = {
        "type": type_name,
        "permission_id": _one(msg, 5, int, 0),
        "owner_address": address(_one(value, 1, bytes, b"")),
    }
    for number, name, convert, kind, default in _CONTRACT_FIELDS.get(type_name, ()):
        contract[name] = convert(_one(value, number, kind, default))
    return contract


@dataclass(frozen=True)
class TronTransaction:
    """A decoded ``Transaction.raw``."""

    raw: bytes
    view: dict[str, Any]

    def accept(self, signer: Signer) -> None:
        """Tron signs with secp256k1 keys; accounts must be ``ADDRESS_FORMAT_TRON``."""
        require_curve(signer, Curve.SECP256K1, "Tron", TRANSACTION_TYPE)
        require_formats(signer, frozenset({AddressFormat.TRON}), "Tron", TRANSACTION_TYPE)

    def policy_variables(self, signer: Signer | None) -> dict[str, Any]:
        """``{"tron": {"tx": {...}}}``."""
        return {"tron": {"tx": dict(self.view)}}

    def transaction_id(self) -> str:
        """The txID: SHA-256 of ``raw_data``, hex."""
        return hashlib.sha256(self.raw).hexdigest()

    def sign(self, private_key_secret: bytes, signer: Signer | None = None) -> str:
        """The signed protobuf ``Transaction`` as hex (as Turnkey returns it)."""
        sig = sign_secp256k1(private_key_secret, hashlib.sha256(self.raw).digest())
        signature = bytes.fromhex(sig.r + sig.s) + bytes([27 + int(sig.v, 16)])
        signed = (b"\x0a" + _length_delimited(self.raw) + self.raw
                  + b"\x12" + _length_delimited(signature) + signature)
        return signed.hex()


def decode(text: str) -> TronTransaction:
    """Decode ``unsignedTransaction`` (``raw_data_hex``); raises :class:`InvalidTransaction`."""
    raw = decode_hex(text, "the transaction's raw_data_hex")
    msg = _message(raw)
    contracts = [_contract(c) for c in msg.get(11, []) if isinstance(c, bytes)]
    if not contracts or _one(msg, 8, int, 0) <= 0:
        raise InvalidTransaction(
            "unsignedTransaction is not a Tron transaction's raw_data (no contract or no "
            "expiration); send the raw_data_hex tronweb's transactionBuilder returns",
            field=FIELD,
        )
    memo = _one(msg, 10, bytes, b"")
    view = {
        "ref_block_bytes": _one(msg, 1, bytes, b"").hex(),
        "ref_block_hash": _one(msg, 4, bytes, b"").hex(),
        "expiration": _one(msg, 8, int, 0),
        "timestamp": _one(msg, 14, int, 0),
        "data": memo.decode("utf-8", errors="replace"),
        "fee_limit": _one(msg, 18, int, 0),
        "contract": contracts,
    }
    return TronTransaction(raw, view)
