"""Decode Ethereum calldata against the organization's stored ABIs (``eth.tx`` call fields).

With an ``SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM`` interface stored for the transaction's
``to`` address (compared case-insensitively), the policy engine shows the call as
``eth.tx.function_name`` (``'transfer'``), ``eth.tx.function_signature`` (the 4-byte selector
with ``0x``, as Etherscan lists it: ``'0xa9059cbb'``) and ``eth.tx.contract_call_args`` (a
map from argument name to value). Decoding uses ``eth-abi`` (well kept, from the Ethereum
Foundation). Values: integers stay ints, addresses are EIP-55 checksummed (as the Turnkey
docs write them in ``contract_call_args['dst'] == '0x08d2…67B7'``), ``bytes``/``bytesN`` are
lower-case ``0x`` hex, tuples become maps by component name, arrays lists. An argument
without a name is keyed by its position (``'0'``, ``'1'``, …). Calldata that matches no
function, or does not decode, leaves the three fields out (a policy reading them then
evaluates to ``OUTCOME_ERROR``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eth_abi import decode
from eth_utils import keccak, to_checksum_address
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from infra.db.models.identity import SmartContractInterface

ETHEREUM_INTERFACE = "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM"


def _type_string(param: Mapping[str, Any]) -> str:
    """The canonical ABI type of one input (tuples spelled out as ``(t1,t2)``)."""
    kind = str(param.get("type", ""))
    if kind.startswith("tuple"):
        inner = ",".join(_type_string(c) for c in param.get("components") or [])
        return f"({inner}){kind[len('tuple'):]}"
    return kind


def _view(value: Any, param: Mapping[str, Any], kind: str) -> Any:
    """One decoded value as policies see it."""
    if kind.endswith("]"):
        inner = kind[: kind.rindex("[")]
        return [_view(v, param, inner) for v in value]
    if kind.startswith("tuple"):
        return _named(param.get("components") or [], value)
    if kind == "address" and isinstance(value, str):
        return to_checksum_address(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    return value


def _named(params: Sequence[Mapping[str, Any]], values: Iterable[Any]) -> dict[str, Any]:
    return {
        str(p.get("name") or i): _view(v, p, str(p.get("type", "")))
        for i, (p, v) in enumerate(zip(params, values, strict=True))
    }


def _functions(abi: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(abi, list):
        yield from (e for e in abi if isinstance(e, Mapping) and e.get("type") == "function")


def decode_call(abi: Any, data: bytes) -> dict[str, Any] | None:
    """``{function_name, function_signature, contract_call_args}`` for ``data``, or ``None``."""
    if len(data) < 4:
        return None
    for entry in _functions(abi):
        inputs = list(entry.get("inputs") or [])
        name = str(entry.get("name", ""))
        types = [_type_string(p) for p in inputs]
        selector = keccak(text=f"{name}({','.join(types)})")[:4]
        if selector != data[:4]:
            continue
        try:
            values = decode(types, data[4:])
        except Exception:  # eth-abi raises several decoding error types; not this function
            continue
        return {
            "function_name": name,
            "function_signature": "0x" + selector.hex(),
            "contract_call_args": _named(inputs, values),
        }
    return None


def decode_contract_call(session: Session, organization_id: str, to: str, data_hex: str) -> dict[str, Any]:
    """The call fields of ``eth.tx`` from the organization's ABIs for ``to`` (``{}`` if none)."""
    if not to or not data_hex:
        return {}
    try:
        data = bytes.fromhex(data_hex[2:] if data_hex[:2] in ("0x", "0X") else data_hex)
    except ValueError:
        return {}
    interfaces = session.scalars(
        select(SmartContractInterface.interface).where(
            SmartContractInterface.organization_id == organization_id,
            SmartContractInterface.interface_type == ETHEREUM_INTERFACE,
            func.lower(SmartContractInterface.address) == to.lower(),
        ).order_by(SmartContractInterface.created_at, SmartContractInterface.id)
    )
    for text in interfaces:
        try:
            abi = json.loads(text)
        except ValueError:
            continue
        found = decode_call(abi, data)
        if found is not None:
            return found
    return {}
