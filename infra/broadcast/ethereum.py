"""Ethereum sends: fill what the caller left out from the node, sign, decode reverts.

Gas is estimated (the estimate is also the pre-flight simulation: a call that would revert is
reported with its reason and never broadcast, so it spends no nonce), EIP-1559 fees come from
the node (twice the pending base fee plus its suggested tip), and the nonce from the nonce
manager. Signing uses ``eth_account``. A stuck transaction is re-signed with the same nonce
and higher fees, within ``infra.broadcast.bounds``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_abi import decode as abi_decode
from sqlalchemy.orm import Session

from infra.broadcast import nonces
from infra.broadcast.rpc import ChainRpc, NodeUnavailable, RpcError, quantity
from infra.errors import InvalidRequest

ERROR_SELECTOR = "08c379a0"  # Error(string)
PANIC_SELECTOR = "4e487b71"  # Panic(uint256)
#: Gas of a type-4 transaction that only sets one authorization (21,000 + 25,000 per
#: authorization, with room for the delegate-clearing write).
UNDELEGATE_GAS = 60_000
ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"


@dataclass(frozen=True)
class Preflight:
    """A send that cannot succeed: the reason, and the revert chain when a contract said no."""

    message: str
    revert_chain: list[dict[str, Any]]


def chain_id(caip2: str) -> int:
    """The EIP-155 chain id of an ``eip155:<id>`` CAIP-2 name."""
    namespace, _, reference = caip2.partition(":")
    if namespace != "eip155" or not reference.isdigit():
        raise InvalidRequest(f"{caip2!r} is not an EVM chain (eip155:<chain id>)", field="caip2")
    return int(reference)


def check_node(rpc: ChainRpc, expected: int) -> None:
    """The node serves the chain its CAIP-2 name says (a misconfiguration is an outage)."""
    actual = quantity(rpc.call("eth_chainId", []))
    if actual != expected:
        raise NodeUnavailable(f"the node configured for {rpc.caip2} serves chain id {actual}")


def parse_quantity(value: str | None, field: str) -> int | None:
    """A decimal or 0x-hex string from the request, or ``None`` when absent."""
    if value is None or value == "":
        return None
    try:
        number = int(value, 16) if value.lower().startswith("0x") else int(value, 10)
    except ValueError:
        raise InvalidRequest(f"{field} must be a decimal or 0x-hex integer", field=field) from None
    if number < 0 or number >= 2**256:
        raise InvalidRequest(f"{field} is out of range", field=field)
    return number


def revert_chain(address: str, data: Any) -> list[dict[str, Any]]:
    """``v1RevertChainEntry`` for revert ``data`` of the contract at ``address``."""
    raw = data if isinstance(data, str) else ""
    raw = raw[2:] if raw.startswith("0x") else raw
    entry: dict[str, Any] = {"address": address}
    try:
        payload = bytes.fromhex(raw)
    except ValueError:
        payload = b""
    if not payload:
        entry.update(errorType="native", displayMessage="execution reverted",
                     native={"nativeType": "execution_reverted"})
    elif raw[:8] == ERROR_SELECTOR:
        try:
            (message,) = abi_decode(["string"], payload[4:])
        except Exception:
            message = ""
        entry.update(errorType="native", displayMessage=f"execution reverted: {message}",
                     native={"nativeType": "error_string", "message": message})
    elif raw[:8] == PANIC_SELECTOR:
        try:
            (code,) = abi_decode(["uint256"], payload[4:])
        except Exception:
            code = 0
        entry.update(errorType="native", displayMessage=f"panic: 0x{code:02x}",
                     native={"nativeType": "panic", "panicCode": str(code)})
    else:
        entry.update(errorType="unknown", displayMessage=f"reverted with selector 0x{raw[:8]}",
                     unknown={"selector": "0x" + raw[:8], "data": "0x" + raw})
    return [entry]


def _revert_data(error: RpcError) -> Any:
    data = error.data
    if isinstance(data, dict):  # some nodes nest it
        data = data.get("data")
    return data


def estimate_gas(rpc: ChainRpc, call: dict[str, Any]) -> int | Preflight:
    """The node's gas estimate, or why the call cannot succeed."""
    try:
        return quantity(rpc.call("eth_estimateGas", [call]))
    except RpcError as ex:
        if "revert" in ex.message.lower() or ex.code == 3:
            chain = revert_chain(str(call.get("to") or ""), _revert_data(ex))
            return Preflight(chain[0]["displayMessage"], chain)
        return Preflight(ex.message or "the node refused the transaction", [])


def suggested_fees(rpc: ChainRpc) -> tuple[int, int]:
    """``(maxFeePerGas, maxPriorityFeePerGas)`` from the node (twice its pending base fee plus
    its suggested tip): advice to check against ``infra.broadcast.bounds``, never trusted."""
    history = rpc.call("eth_feeHistory", ["0x1", "latest", []])
    base_fees = history.get("baseFeePerGas") if isinstance(history, dict) else None
    if not isinstance(base_fees, list) or not base_fees:
        raise NodeUnavailable(f"the {rpc.caip2} node has no EIP-1559 base fee")
    base = quantity(base_fees[-1])
    try:
        tip = quantity(rpc.call("eth_maxPriorityFeePerGas", []))
    except RpcError:
        tip = 1_000_000_000
    return 2 * base + tip, tip


def pending_nonce(rpc: ChainRpc, address: str) -> int:
    """The node's count of the address's transactions, pending ones included."""
    return quantity(rpc.call("eth_getTransactionCount", [address, "pending"]))


def take_nonce(session: Session, rpc: ChainRpc, address: str, given: int | None) -> int:
    """The nonce this send uses: the caller's, or the next the manager hands out."""
    if given is not None:
        nonces.note_used(session, rpc.caip2, address, given)
        return given
    return nonces.reserve(session, rpc.caip2, address, pending_nonce(rpc, address))


def _account() -> Any:
    """eth-account's ``Account``, imported on first use (it costs about half a second at
    process start, and only chains with an RPC configured send)."""
    from eth_account import Account

    return Account


def sign(unsigned: dict[str, Any], key_secret: bytes) -> tuple[str, str]:
    """``(raw transaction 0x-hex, hash 0x-hex)`` of the EIP-1559 / EIP-7702 fields."""
    signed = _account().sign_transaction(dict(unsigned), key_secret)
    return "0x" + bytes(signed.raw_transaction).hex(), "0x" + bytes(signed.hash).hex()


def undelegation(chain: int, nonce: int, key_secret: bytes) -> dict[str, Any]:
    """The authorization that clears the sender's own delegation (its nonce is ``nonce + 1``:
    the sender's nonce moves before authorizations are applied)."""
    auth = _account().sign_authorization(
        {"chainId": chain, "address": ZERO_ADDRESS, "nonce": nonce + 1}, key_secret)
    return {"chainId": auth.chain_id, "address": ZERO_ADDRESS, "nonce": auth.nonce,
            "yParity": auth.y_parity, "r": auth.r, "s": auth.s}


def replay_revert(rpc: ChainRpc, unsigned: dict[str, Any], sender: str,
                  block: int) -> list[dict[str, Any]]:
    """Why an included transaction reverted: the call replayed on the block before it."""
    call = {"from": sender, "to": unsigned.get("to"), "data": unsigned.get("data", "0x"),
            "value": hex(int(unsigned.get("value", 0))), "gas": hex(int(unsigned["gas"]))}
    try:
        rpc.call("eth_call", [call, hex(max(block - 1, 0))])
    except RpcError as ex:
        return revert_chain(str(call["to"] or ""), _revert_data(ex))
    except NodeUnavailable:
        pass
    return revert_chain(str(call["to"] or ""), "")
