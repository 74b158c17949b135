"""What ``eth_send_transaction`` and ``eth_undelegate_7702`` do inside their activity.

In the activity's transaction: resolve ``from`` to a key of the organization, ask the node for
what the caller left out (gas through a pre-flight estimate, EIP-1559 fees: refused beyond
the sanity bound of ``infra.broadcast.bounds``), have the policies judge the transaction with
what walletd filled in (``infra.broadcast.reapproval``: the activity's decision saw only the
intent), take a nonce from the nonce manager, sign, and store the signed transaction for the
tracker with the fees it was first signed with. A send that fails pre-flight is stored as
``FAILED`` with its reason and takes no nonce; one the policies refuse fails the activity
(``PolicyDenied``) before any nonce is taken or key is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_utils import to_checksum_address

from infra.activities.spec import ActivityContext
from infra.broadcast import bounds, ethereum, reapproval, status
from infra.broadcast.rpc import ChainRpc, chain
from infra.crypto.addresses import Curve
from infra.errors import FailedPrecondition, InvalidRequest, PolicyDenied
from infra.settings import Settings
from infra.wallets import store
from infra.worker_services import custody_of


@dataclass(frozen=True)
class EthSend:
    """One send as the caller asked for it (``None``: walletd fills it)."""

    sender: str
    caip2: str
    to: str | None
    value: int
    data: str
    nonce: int | None = None
    gas_limit: int | None = None
    max_fee_per_gas: int | None = None
    max_priority_fee_per_gas: int | None = None


def check_sender(ctx_session: Any, organization_id: str, sender: str) -> store.SigningTarget:
    """``from`` must be an Ethereum address of the organization's keys (no key ids)."""
    if not sender.startswith("0x") or len(sender) != 42:
        raise InvalidRequest("from must be a 0x-prefixed Ethereum address of a wallet account "
                             "or private key (not a private key id)", field="from")
    target = store.resolve_sign_with(ctx_session, organization_id, sender)
    if target.curve is not Curve.SECP256K1:
        raise InvalidRequest("from must be a secp256k1 (Ethereum) key", field="from")
    return target


def checksum(address: str, field: str) -> str:
    """An EIP-55 address (what ``eth_account`` signs), or a 400 naming ``field``."""
    try:
        if not address.startswith("0x") or len(address) != 42:
            raise ValueError(address)
        return str(to_checksum_address(address))
    except ValueError:
        raise InvalidRequest("must be a 0x-prefixed 20-byte hex address", field=field) from None


def check_call(to: str | None, data: str, field: str) -> None:
    """``to`` an address (or absent for a deployment), ``data`` hex."""
    if to is not None:
        checksum(to, f"{field}.to")
    try:
        bytes.fromhex(data[2:] if data.startswith("0x") else data)
    except ValueError:
        raise InvalidRequest("data must be hex", field=f"{field}.data") from None


def send(ctx: ActivityContext, request: EthSend, *, authorization: bool = False) -> str:
    """Sign and store one send; its ``sendTransactionStatusId``."""
    rpc = chain(ctx.services.settings, request.caip2)
    chain_id = ethereum.chain_id(request.caip2)
    target = check_sender(ctx.session, ctx.organization_id, request.sender)
    complete = None not in (request.nonce, request.max_fee_per_gas,
                            request.max_priority_fee_per_gas) and (
        request.gas_limit is not None or authorization)
    if not complete:  # the node fills the rest: it must serve the chain its name says
        ethereum.check_node(rpc, chain_id)
    sender = request.sender.lower()
    data = request.data if request.data.startswith("0x") else "0x" + request.data
    unsigned: dict[str, Any] = {"type": 4 if authorization else 2, "chainId": chain_id,
                                "value": request.value, "data": data}
    if request.to is not None:
        unsigned["to"] = checksum(request.to, "to")
    gas = request.gas_limit
    if gas is None and authorization:
        gas = ethereum.UNDELEGATE_GAS
    if gas is None:
        call = {"from": sender, "value": hex(request.value), "data": data}
        if request.to is not None:
            call["to"] = request.to
        estimate = ethereum.estimate_gas(rpc, call)
        if isinstance(estimate, ethereum.Preflight):
            row = status.create(ctx.uow, organization_id=ctx.organization_id,
                                activity_id=ctx.activity.id, caip2=request.caip2, chain="eth",
                                sender=sender, nonce=None, unsigned=unsigned, raw="", tx_hash="",
                                now=ctx.now, failure=status.failure(estimate.message,
                                                                    estimate.revert_chain))
            return row.id
        gas = estimate
    unsigned["gas"] = gas
    if request.max_fee_per_gas is None or request.max_priority_fee_per_gas is None:
        fee, tip = _sane_suggestion(rpc, ctx.services.settings)
        tip = request.max_priority_fee_per_gas if request.max_priority_fee_per_gas is not None else tip
        fee = request.max_fee_per_gas if request.max_fee_per_gas is not None else max(fee, tip)
    else:
        fee, tip = request.max_fee_per_gas, request.max_priority_fee_per_gas
    if tip > fee:
        raise InvalidRequest("maxPriorityFeePerGas may not exceed maxFeePerGas",
                             field="maxPriorityFeePerGas")
    unsigned.update(maxFeePerGas=fee, maxPriorityFeePerGas=tip, accessList=[])
    if None in (request.gas_limit, request.max_fee_per_gas, request.max_priority_fee_per_gas):
        _check_filled(ctx, unsigned)  # the policies saw none of what walletd filled in
    key_secret = store.signing_secret(custody_of(ctx.services), target)
    # The nonce last: the row lock it takes is held only for the rest of this transaction.
    nonce = ethereum.take_nonce(ctx.session, rpc, sender, request.nonce)
    unsigned["nonce"] = nonce
    if authorization:
        unsigned["authorizationList"] = [ethereum.undelegation(chain_id, nonce, key_secret)]
    raw, tx_hash = ethereum.sign(unsigned, key_secret)
    row = status.create(ctx.uow, organization_id=ctx.organization_id,
                        activity_id=ctx.activity.id, caip2=request.caip2, chain="eth",
                        sender=sender, nonce=nonce, unsigned=unsigned, raw=raw, tx_hash=tx_hash,
                        now=ctx.now, first_fees=bounds.Fees(fee, tip).to_stored())
    return row.id


def _check_filled(ctx: ActivityContext, unsigned: dict[str, Any]) -> None:
    """The policies allow signing ``unsigned`` (gas and fees as walletd filled them, the
    nonce not taken yet), judged like the intent with the approvals live now; a
    ``PolicyDenied`` naming the denying policies otherwise (the activity fails, nothing of
    its transaction is kept)."""
    decision = reapproval.verdict(ctx.session, ctx.activity.id, unsigned, ctx.now)
    if decision.allowed:
        return
    fees = bounds.Fees(unsigned["maxFeePerGas"], unsigned["maxPriorityFeePerGas"])
    raise PolicyDenied(
        f"{decision.message}: the policies do not allow the transaction with the gas and fees "
        f"walletd filled in (gas {unsigned['gas']}, {fees.describe()}): "
        f"{reapproval.explained(decision)}; nothing was signed (set gasLimit and the fees in "
        "the request to have them judged with it)")


def _sane_suggestion(rpc: ChainRpc, settings: Settings) -> tuple[int, int]:
    """The node's suggested ``(maxFeePerGas, maxPriorityFeePerGas)``, refused (before any
    nonce is taken) when beyond ``WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI``."""
    fee, tip = ethereum.suggested_fees(rpc)
    limit = bounds.suggestion_limit(settings)
    why = bounds.refused(bounds.Fees(fee, tip), limit, limit)
    if why:
        bounds.note("suggestion_refused")
        raise FailedPrecondition(
            f"{why} (WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI): walletd does not sign fees a "
            "node suggests beyond it; set maxFeePerGas and maxPriorityFeePerGas yourself")
    return fee, tip
