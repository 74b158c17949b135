"""``get_nonces``: the next nonce of an address, from the node and walletd's nonce manager.

``nonce`` is the larger of the node's pending count and the next nonce the manager would hand
out (transactions walletd signed but has not broadcast yet count). walletd runs no gas
station, so ``gasStationNonce`` is refused with a clear 400.
"""

from __future__ import annotations

from typing import Any

from infra.broadcast import ethereum, nonces
from infra.broadcast.rpc import chain
from infra.errors import InvalidRequest
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetNoncesRequest``."""

    organization_id: str
    address: str
    caip2: str
    nonce: bool | None = None
    gas_station_nonce: bool | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    if params.gas_station_nonce:
        raise InvalidRequest("walletd runs no gas station: there is no gasStationNonce",
                             field="gasStationNonce")
    if not params.address.startswith("0x") or len(params.address) != 42:
        raise InvalidRequest("address must be a 0x-prefixed Ethereum address", field="address")
    rpc = chain(ctx.services.settings, params.caip2)
    ethereum.check_node(rpc, ethereum.chain_id(params.caip2))
    if params.nonce is False:
        return {}
    managed = nonces.peek(ctx.session, params.caip2, params.address) or 0
    return {"nonce": str(max(managed, ethereum.pending_nonce(rpc, params.address)))}


SPEC = QuerySpec(path="get_nonces", params=Params, run=run)
