"""Ethereum transactions (``TRANSACTION_TYPE_ETHEREUM``): decode, show to policies, sign.

``unsignedTransaction`` is the hex of what ``viem``'s ``serializeTransaction`` and ethers'
``unsignedSerialized`` produce: a legacy RLP list ``[nonce, gasPrice, gas, to, value, data]``
(with the EIP-155 ``chainId, 0, 0`` tail when a chain id is set) or an EIP-2718 envelope of
type 1 (EIP-2930), 2 (EIP-1559), 3 (EIP-4844, without the blob sidecar) or 4 (EIP-7702, with
its signed authorization list). Decoding uses ``rlp`` (strict); every field is checked before
anything is stored. Signing hashes exactly the canonical re-encoding of the decoded fields with
keccak-256 and appends ``yParity, r, s`` (``v`` for legacy, EIP-155 when a chain id is set), so
the answer is the signed transaction as Turnkey returns it: hex without ``0x``.

Policies see ``eth.tx`` (PROTOCOL.md §8.3) with lower-case hex and ints, and for a type-4
transaction with exactly one authorization ``eth.eip_7702_authorization{address, chain_id,
nonce}``; with several it is left out, so a policy reading it errors (deny) rather than judging
only the first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import rlp
from eth_utils import keccak

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
from infra.policy.variables import eth_tx_variable

TRANSACTION_TYPE = "TRANSACTION_TYPE_ETHEREUM"
_TYPE_NAMES = {0: "LEGACY", 1: "TYPE_1", 2: "TYPE_2", 3: "TYPE_3", 4: "TYPE_4"}
_ACCOUNT_FORMATS = frozenset(
    {AddressFormat.ETHEREUM, AddressFormat.COMPRESSED, AddressFormat.UNCOMPRESSED}
)
_BLOB_HASH_VERSION = 0x01


def _int(item: Any, name: str) -> int:
    if not isinstance(item, bytes):
        raise InvalidTransaction(f"transaction field {name} must be an RLP string", field=FIELD)
    if item[:1] == b"\x00":
        raise InvalidTransaction(f"transaction field {name} has leading zero bytes", field=FIELD)
    if len(item) > 32:
        raise InvalidTransaction(f"transaction field {name} is wider than 256 bits", field=FIELD)
    return int.from_bytes(item, "big")


def _address(item: Any, name: str, *, creation: bool = False) -> str:
    allowed = (0, 20) if creation else (20,)
    if not isinstance(item, bytes) or len(item) not in allowed:
        what = "empty (contract creation) or 20 bytes" if creation else "a 20-byte address"
        raise InvalidTransaction(f"transaction field {name} must be {what}", field=FIELD)
    return "0x" + item.hex() if item else ""


def _bytes(item: Any, name: str) -> str:
    if not isinstance(item, bytes):
        raise InvalidTransaction(f"transaction field {name} must be an RLP string", field=FIELD)
    return "0x" + item.hex()


def _list(item: Any, name: str) -> list[Any]:
    if not isinstance(item, list):
        raise InvalidTransaction(f"transaction field {name} must be an RLP list", field=FIELD)
    return item


def _access_list(item: Any, name: str) -> list[dict[str, Any]]:
    out = []
    for entry in _list(item, name):
        if not isinstance(entry, list) or len(entry) != 2:
            raise InvalidTransaction("each accessList entry is [address, [storageKeys]]", field=FIELD)
        keys = _list(entry[1], "accessList storageKeys")
        if not all(isinstance(k, bytes) and len(k) == 32 for k in keys):
            raise InvalidTransaction("accessList storage keys are 32 bytes each", field=FIELD)
        out.append({"address": _address(entry[0], "accessList address"),
                    "storage_keys": ["0x" + k.hex() for k in keys]})
    return out


def _blob_hashes(item: Any, name: str) -> list[str]:
    hashes = _list(item, name)
    if not hashes:
        raise InvalidTransaction("an EIP-4844 transaction carries at least one blob hash",
                                 field=FIELD)
    for h in hashes:
        if not isinstance(h, bytes) or len(h) != 32 or h[0] != _BLOB_HASH_VERSION:
            raise InvalidTransaction(
                "blobVersionedHashes are 32 bytes each, starting with version 0x01", field=FIELD)
    return ["0x" + h.hex() for h in hashes]


def _authorizations(item: Any, name: str) -> list[dict[str, Any]]:
    entries = _list(item, name)
    if not entries:
        raise InvalidTransaction("an EIP-7702 transaction carries at least one authorization",
                                 field=FIELD)
    out = []
    for entry in entries:
        if not isinstance(entry, list) or len(entry) != 6:
            raise InvalidTransaction(
                "each authorizationList entry is a signed authorization [chainId, address, "
                "nonce, yParity, r, s]; sign the authorizations first", field=FIELD)
        if _int(entry[3], "authorization yParity") > 1:
            raise InvalidTransaction("authorization yParity must be 0 or 1", field=FIELD)
        _int(entry[4], "authorization r")
        _int(entry[5], "authorization s")
        out.append({"chain_id": _int(entry[0], "authorization chainId"),
                    "address": _address(entry[1], "authorization address"),
                    "nonce": _int(entry[2], "authorization nonce")})
    return out


_Reader = Callable[[Any, str], Any]
# (wire name, policy name, reader); "to" is handled by the envelope (creation allowed or not).
_N: _Reader = _int
_FIELDS: dict[str, tuple[str, _Reader]] = {
    "chainId": ("chain_id", _N), "nonce": ("nonce", _N), "gasPrice": ("gas_price", _N),
    "gas": ("gas", _N), "value": ("value", _N), "data": ("data", _bytes),
    "maxPriorityFeePerGas": ("max_priority_fee_per_gas", _N),
    "maxFeePerGas": ("max_fee_per_gas", _N), "accessList": ("access_list", _access_list),
    "maxFeePerBlobGas": ("max_fee_per_blob_gas", _N),
    "blobVersionedHashes": ("blob_versioned_hashes", _blob_hashes),
    "authorizationList": ("authorization_list", _authorizations),
}  # fmt: skip

_LEGACY = ("nonce", "gasPrice", "gas", "to", "value", "data")
_TYPE_1 = ("chainId", "nonce", "gasPrice", "gas", "to", "value", "data", "accessList")
_TYPE_2 = ("chainId", "nonce", "maxPriorityFeePerGas", "maxFeePerGas", "gas", "to", "value",
           "data", "accessList")
_ENVELOPES: dict[int, tuple[tuple[str, ...], bool]] = {
    # type: (fields, contract creation allowed)
    1: (_TYPE_1, True),
    2: (_TYPE_2, True),
    3: ((*_TYPE_2, "maxFeePerBlobGas", "blobVersionedHashes"), False),
    4: ((*_TYPE_2, "authorizationList"), False),
}


@dataclass(frozen=True)
class EthereumTransaction:
    """A decoded unsigned Ethereum transaction: its RLP items and their decoded values."""

    tx_type: int
    items: list[Any]
    fields: dict[str, Any] = field(default_factory=dict)

    def accept(self, signer: Signer) -> None:
        """Ethereum signs with secp256k1 keys; accounts must be Ethereum (or raw-key) accounts."""
        require_curve(signer, Curve.SECP256K1, "Ethereum", TRANSACTION_TYPE)
        require_formats(signer, _ACCOUNT_FORMATS, "Ethereum", TRANSACTION_TYPE)

    def policy_view(self, sender: str = "") -> dict[str, Any]:
        """``eth.tx`` for policies; ``sender`` is the signing address when known."""
        f = self.fields
        view: dict[str, Any] = {
            "from": sender, "to": f.get("to", ""), "data": f.get("data", "0x"),
            "value": f.get("value", 0), "gas": f.get("gas", 0), "nonce": f.get("nonce", 0),
            "type": _TYPE_NAMES[self.tx_type],
            **{k: f[k] for k in ("chain_id", "gas_price", "max_fee_per_gas",
                                  "max_priority_fee_per_gas", "max_fee_per_blob_gas") if k in f},
        }  # fmt: skip
        return eth_tx_variable(view)

    def authorization(self) -> dict[str, Any] | None:
        """``eth.eip_7702_authorization`` when the transaction carries exactly one."""
        found = self.fields.get("authorization_list") or []
        return dict(found[0]) if len(found) == 1 else None

    def policy_variables(self, signer: Signer | None) -> dict[str, Any]:
        """``{"eth": {"tx": ..., "eip_7702_authorization": ...}}``."""
        sender = signer.address if signer is not None else ""
        eth: dict[str, Any] = {"tx": self.policy_view(sender)}
        authorization = self.authorization()
        if authorization is not None:
            eth["eip_7702_authorization"] = authorization
        return {"eth": eth}

    def signing_payload(self) -> bytes:
        """The bytes whose keccak-256 is signed: ``type ‖ rlp(fields)`` or ``rlp(fields)``."""
        body = rlp.encode(self.items)
        return body if self.tx_type == 0 else bytes([self.tx_type]) + body

    def sign(self, private_key_secret: bytes, signer: Signer | None = None) -> str:
        """The signed transaction, hex without ``0x`` (as Turnkey returns it)."""
        signature = sign_secp256k1(private_key_secret, keccak(self.signing_payload()))
        r, s, parity = int(signature.r, 16), int(signature.s, 16), int(signature.v, 16)
        if self.tx_type != 0:
            signed = rlp.encode([*self.items, parity, r, s])
            return (bytes([self.tx_type]) + signed).hex()
        chain_id = self.fields.get("chain_id")
        v = 27 + parity if chain_id is None else chain_id * 2 + 35 + parity
        return bytes(rlp.encode([*self.items[:6], v, r, s])).hex()


def _read(items: list[Any], names: tuple[str, ...], creation: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, item in zip(names, items, strict=True):
        if name == "to":
            fields["to"] = _address(item, "to", creation=creation)
        else:
            key, reader = _FIELDS[name]
            fields[key] = reader(item, name)
    return fields


def _decode_rlp(payload: bytes) -> list[Any]:
    try:
        items = rlp.decode(payload, strict=True)
    except Exception:  # rlp raises several DecodingError flavours
        raise InvalidTransaction(
            "unsignedTransaction is not valid RLP (truncated or malformed); send the complete "
            "unsigned transaction as viem's serializeTransaction or ethers' unsignedSerialized "
            "produce it",
            field=FIELD,
        ) from None
    if not isinstance(items, list):
        raise InvalidTransaction("unsignedTransaction must be an RLP list", field=FIELD)
    return items


def decode(text: str) -> EthereumTransaction:
    """Decode ``unsignedTransaction`` (hex, ``0x`` optional); raises :class:`InvalidTransaction`."""
    return decode_bytes(decode_hex(text, "the RLP-encoded unsigned transaction"))


def decode_bytes(raw: bytes) -> EthereumTransaction:
    """Decode the bytes of an unsigned transaction; raises :class:`InvalidTransaction`."""
    tx_type, payload = (0, raw) if raw[0] >= 0xC0 else (raw[0], raw[1:])
    if tx_type == 0:
        return _legacy(_decode_rlp(payload))
    if tx_type not in _ENVELOPES:
        raise InvalidTransaction(
            f"Ethereum transaction type {tx_type} is not supported; send a legacy, EIP-2930, "
            "EIP-1559, EIP-4844 or EIP-7702 transaction (types 0 to 4)",
            field=FIELD,
        )
    items = _decode_rlp(payload)
    names, creation = _ENVELOPES[tx_type]
    if tx_type == 3 and len(items) == 4 and isinstance(items[0], list):
        raise InvalidTransaction(
            "this EIP-4844 transaction carries its blob sidecar; send it without the sidecar "
            "(blobs, commitments and proofs), as @turnkey/viem does",
            field=FIELD,
        )
    if len(items) != len(names):
        raise InvalidTransaction(
            f"a type-{tx_type} transaction has {len(names)} fields, got {len(items)}; send it "
            "unsigned (without yParity, r, s)",
            field=FIELD,
        )
    return EthereumTransaction(tx_type, items, _read(items, names, creation))


def _legacy(items: list[Any]) -> EthereumTransaction:
    if len(items) not in (6, 9):
        raise InvalidTransaction(
            f"a legacy transaction has 6 fields (or 9 with the EIP-155 chain id), got "
            f"{len(items)}; send it unsigned (without v, r, s)",
            field=FIELD,
        )
    fields = _read(items[:6], _LEGACY, creation=True)
    if len(items) == 9:
        if items[7] != b"" or items[8] != b"":
            raise InvalidTransaction("the EIP-155 tail must be chainId, 0, 0", field=FIELD)
        chain_id = _int(items[6], "chainId")
        if chain_id == 0:
            raise InvalidTransaction("the EIP-155 chain id must not be 0; send 6 fields instead",
                                     field=FIELD)
        fields["chain_id"] = chain_id
    return EthereumTransaction(0, items, fields)
