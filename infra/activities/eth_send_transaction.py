"""``eth_send_transaction``: sign an Ethereum transaction and broadcast it (V1 and V2).

V1 (``ACTIVITY_TYPE_ETH_SEND_TRANSACTION``) names one call with ``to``/``value``/``data``; V2
(``..._V2``) a list of ``calls``. walletd runs no gas station (no paymaster, no EIP-7702 batch
delegate), so ``sponsor: true`` and several calls are refused with a clear 400; one call is sent
as an EIP-1559 transaction paid by ``from``. What walletd fills, how it broadcasts and follows
the transaction: ``infra.broadcast``. Policies see ``eth.tx`` as for ``sign_transaction``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.broadcast import eth_send, ethereum
from infra.broadcast.rpc import chain
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wiremodel import WireModel

MAX_CALLS = 50


class Call(WireModel):
    """``v1EthCallParams``."""

    to: str
    value: str | None = None
    data: str | None = None


class _Fees(WireModel):
    from_: str = Field(alias="from")
    caip2: str
    sponsor: bool | None = None
    nonce: str | None = None
    gas_limit: str | None = None
    max_fee_per_gas: str | None = None
    max_priority_fee_per_gas: str | None = None


class Params(_Fees):
    """``v1EthSendTransactionIntent`` (one call)."""

    to: str | None = None
    value: str | None = None
    data: str | None = None
    gas_station_nonce: str | None = None

    def calls(self) -> list[Call]:
        if self.to is None:
            raise InvalidRequest("to is required", field="to")
        return [Call(to=self.to, value=self.value, data=self.data)]


class ParamsV2(_Fees):
    """``v1EthSendTransactionIntentV2`` (a list of calls)."""

    calls_: list[Call] = Field(alias="calls")
    deadline: str | None = None
    gas_station_nonce: str | None = None

    def calls(self) -> list[Call]:
        return self.calls_


def request(params: Params | ParamsV2) -> eth_send.EthSend:
    """The send the caller asked for, every field checked (a 400 naming it otherwise)."""
    if params.sponsor:
        raise InvalidRequest("sponsor: true needs a gas station, which walletd does not run; "
                             "send sponsor: false (the from address pays gas)", field="sponsor")
    calls = params.calls()
    if not 1 <= len(calls) <= MAX_CALLS:
        raise InvalidRequest(f"calls must hold between 1 and {MAX_CALLS} entries", field="calls")
    if len(calls) > 1:
        raise InvalidRequest("several calls are an EIP-7702 batch through a gas station "
                             "delegate, which walletd does not run; send one call per "
                             "transaction", field="calls")
    (call,) = calls
    data = call.data or "0x"
    eth_send.check_call(call.to, data, "calls[0]")
    return eth_send.EthSend(
        sender=params.from_, caip2=params.caip2, to=call.to,
        value=ethereum.parse_quantity(call.value, "value") or 0, data=data,
        nonce=ethereum.parse_quantity(params.nonce, "nonce"),
        gas_limit=ethereum.parse_quantity(params.gas_limit, "gasLimit"),
        max_fee_per_gas=ethereum.parse_quantity(params.max_fee_per_gas, "maxFeePerGas"),
        max_priority_fee_per_gas=ethereum.parse_quantity(params.max_priority_fee_per_gas,
                                                         "maxPriorityFeePerGas"))


def check(params: Params | ParamsV2, ctx: CheckContext) -> None:
    wanted = request(params)
    ethereum.chain_id(wanted.caip2)
    eth_send.check_sender(ctx.session, ctx.organization_id, wanted.sender)


def execute(params: Params | ParamsV2, ctx: ActivityContext) -> dict[str, Any]:
    wanted = request(params)
    chain(ctx.services.settings, wanted.caip2)
    return {"sendTransactionStatusId": eth_send.send(ctx, wanted)}


SPEC = ActivitySpec(
    path="eth_send_transaction",
    versions=(
        Version("ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", ParamsV2, "ethSendTransactionIntentV2",
                "ethSendTransactionResultV2"),
        Version("ACTIVITY_TYPE_ETH_SEND_TRANSACTION", Params, "ethSendTransactionIntent",
                "ethSendTransactionResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.SIGNING,
    resource="PRIVATE_KEY",
    action="SIGN",
)
