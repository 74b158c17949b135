"""Following a Solana send: ``sendTransaction``, then ``getSignatureStatuses`` to confirmation.

Re-sending the same signed bytes is harmless (same signature: the cluster processes it once),
so a lost send or a node restart is answered by sending again while the blockhash is valid;
once it has expired without the signature landing, the transaction can never land and is
``FAILED``. Preflight failures are reported with the node's logs (``v1SolanaFailureDetails``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from infra.broadcast import status
from infra.broadcast.rpc import ChainRpc, RpcError
from infra.clock import now
from infra.db.models.broadcast import SendTransaction

Record = Callable[..., None]
_SEND_OPTIONS = {"encoding": "base64", "preflightCommitment": "confirmed"}
_INCLUDED = ("confirmed", "finalized")


def _preflight(ex: RpcError) -> dict[str, Any]:
    data = ex.data if isinstance(ex.data, dict) else {}
    details: dict[str, Any] = {"source": "preflight", "rpcCode": ex.code, "rpcMessage": ex.message}
    if isinstance(data.get("logs"), list):
        details["logs"] = [str(line) for line in data["logs"]]
    if data.get("err") is not None:
        details["transactionErrorJson"] = json.dumps(data["err"])
    if isinstance(data.get("unitsConsumed"), int):
        details["unitsConsumed"] = str(data["unitsConsumed"])
    return details


def _send(rpc: ChainRpc, row: SendTransaction) -> None:
    rpc.call("sendTransaction", [row.raw_transaction, _SEND_OPTIONS])


def step(rpc: ChainRpc, row: SendTransaction, record: Record, poll_s: float) -> None:
    """One step of one Solana row (``record(row_id, status, **changes)`` writes it)."""
    if row.status == status.INITIALIZED:
        try:
            _send(rpc, row)
        except RpcError as ex:
            if "already been processed" not in ex.message.lower():
                record(row.id, status.FAILED, error=status.failure(
                    f"the node refused the transaction: {ex.message}", solana=_preflight(ex)))
                return
        record(row.id, status.BROADCASTING, delay_s=poll_s, broadcast_at=now(),
               attempts=row.attempts + 1)
        return
    answer = rpc.call("getSignatureStatuses", [[row.tx_hash], {"searchTransactionHistory": True}])
    found = (answer or {}).get("value", [None])[0] if isinstance(answer, dict) else None
    if isinstance(found, dict):
        if found.get("err") is not None:
            record(row.id, status.FAILED, block_number=found.get("slot"), error=status.failure(
                "the transaction failed on chain", solana={
                    "source": "execution", "transactionErrorJson": json.dumps(found["err"])}))
            return
        if found.get("confirmationStatus") in _INCLUDED:
            record(row.id, status.INCLUDED, block_number=found.get("slot"))
            return
        record(row.id, status.BROADCASTING, delay_s=poll_s)
        return
    valid = rpc.call("isBlockhashValid", [row.unsigned.get("blockhash", ""),
                                          {"commitment": "confirmed"}])
    if isinstance(valid, dict) and valid.get("value") is False:
        record(row.id, status.FAILED, error=status.failure(
            "the transaction's blockhash expired before it was included; send it again with "
            "a fresh blockhash"))
        return
    with contextlib.suppress(RpcError):
        _send(rpc, row)  # the node may have lost it: the same bytes again
    record(row.id, status.BROADCASTING, delay_s=poll_s)
