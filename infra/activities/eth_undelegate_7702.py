"""``eth_undelegate_7702``: clear the EIP-7702 delegation of an address of the organization.

A type-4 transaction from the address to itself whose one authorization, signed by the same
key, delegates to the zero address (which clears the delegation). Sent and followed like any
``eth_send_transaction``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.broadcast import eth_send, ethereum
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1EthUndelegate7702Intent``."""

    from_: str = Field(alias="from")
    caip2: str
    nonce: str | None = None
    gas_limit: str | None = None
    max_fee_per_gas: str | None = None
    max_priority_fee_per_gas: str | None = None


def request(params: Params) -> eth_send.EthSend:
    return eth_send.EthSend(
        sender=params.from_, caip2=params.caip2, to=params.from_, value=0, data="0x",
        nonce=ethereum.parse_quantity(params.nonce, "nonce"),
        gas_limit=ethereum.parse_quantity(params.gas_limit, "gasLimit"),
        max_fee_per_gas=ethereum.parse_quantity(params.max_fee_per_gas, "maxFeePerGas"),
        max_priority_fee_per_gas=ethereum.parse_quantity(params.max_priority_fee_per_gas,
                                                         "maxPriorityFeePerGas"))


def check(params: Params, ctx: CheckContext) -> None:
    ethereum.chain_id(params.caip2)
    eth_send.check_sender(ctx.session, ctx.organization_id, params.from_)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    return {"sendTransactionStatusId": eth_send.send(ctx, request(params), authorization=True)}


SPEC = ActivitySpec(
    path="eth_undelegate_7702",
    versions=(Version("ACTIVITY_TYPE_ETH_UNDELEGATE_7702", Params, "ethUndelegate7702Intent",
                      "ethUndelegate7702Result"),),
    execute=execute,
    check=check,
    pool=queues.SIGNING,
    resource="PRIVATE_KEY",
    action="SIGN",
)
