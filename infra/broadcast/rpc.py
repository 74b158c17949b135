"""JSON-RPC to the chains walletd broadcasts to, under the webhooks' egress rules.

``WALLETD_CHAIN_RPC`` maps CAIP-2 ids to URLs; a URL must be public https unless
``WALLETD_CHAIN_ALLOW`` lists its host or network (as ``WALLETD_WEBHOOK_ALLOW`` does for
webhooks). Every call is pinned to the address that was checked, has a deadline and a capped
body (``infra.sessions.egress``).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from infra.errors import InvalidRequest, Unavailable
from infra.sessions.egress import Egress, UpstreamUnavailable
from infra.settings import Settings
from infra.webhooks.destinations import AllowList

_ids = itertools.count(1)


class NodeUnavailable(Unavailable):
    """The chain's node could not be reached or answered unusably (worth retrying)."""

    code = "chain_node_unavailable"


class RpcError(Exception):
    """The node answered with a JSON-RPC error (a definite answer, not an outage)."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} ({code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class ChainRpc:
    """One configured chain's node."""

    caip2: str
    url: str
    egress: Egress

    def call(self, method: str, params: list[Any]) -> Any:
        """One JSON-RPC call; its ``result``.

        Raises:
            RpcError: the node answered with an error object.
            NodeUnavailable: no usable answer (connection, deadline, HTTP status, not JSON).
        """
        body = json.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": method,
                           "params": params}).encode()
        try:
            answer = self.egress.request("POST", self.url, f"the {self.caip2} node", body=body,
                                         headers={"Content-Type": "application/json"})
        except UpstreamUnavailable as ex:
            raise NodeUnavailable(ex.message) from None
        if answer.status != 200:
            raise NodeUnavailable(f"the {self.caip2} node answered HTTP {answer.status}")
        try:
            reply = answer.json(f"the {self.caip2} node")
        except UpstreamUnavailable as ex:
            raise NodeUnavailable(ex.message) from None
        if not isinstance(reply, dict):
            raise NodeUnavailable(f"the {self.caip2} node answered something not JSON-RPC")
        error = reply.get("error")
        if isinstance(error, dict):
            raise RpcError(method, int(error.get("code") or 0), str(error.get("message") or ""),
                           error.get("data"))
        if "result" not in reply:
            raise NodeUnavailable(f"the {self.caip2} node answered without a result")
        return reply["result"]


def configured(settings: Settings) -> dict[str, str]:
    """CAIP-2 id → URL of every configured chain."""
    return dict(settings.chain_rpc)


def chain(settings: Settings, caip2: str, field: str = "caip2") -> ChainRpc:
    """The node of ``caip2``.

    Raises:
        InvalidRequest: the chain is not configured on this deployment (a clear 400).
    """
    url = configured(settings).get(caip2)
    if not url:
        known = ", ".join(sorted(configured(settings))) or "none"
        raise InvalidRequest(
            f"caip2 {caip2!r} is not a chain this deployment broadcasts to (configured: {known}; "
            "the operator sets WALLETD_CHAIN_RPC)", field=field)
    egress = Egress(AllowList.of(settings.chain_allow), allow_setting="WALLETD_CHAIN_ALLOW")
    return ChainRpc(caip2, url, egress)


def quantity(value: Any) -> int:
    """A JSON-RPC hex quantity (``0x1a``) as an int.

    Raises:
        NodeUnavailable: not a quantity.
    """
    if isinstance(value, str) and value.startswith("0x"):
        try:
            return int(value, 16)
        except ValueError:
            pass
    raise NodeUnavailable(f"the node answered {value!r} where a hex quantity was expected")
