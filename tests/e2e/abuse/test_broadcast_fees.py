"""Bounded replacement of stuck transactions (issue 31 item 4), from the attacker's side.

The world: ``walletd up`` broadcasting to anvil through a JSON-RPC peer of the test's own
(:class:`Market`), which forwards every call to anvil and can lie about fees the way a hostile
or compromised RPC provider would. It also plays the fee market: after every
``eth_sendRawTransaction`` it mines one block at a fixed base fee, so a transaction under that
base fee stays stuck and a replacement above it is included at once (no race with the
tracker, no timing in the assertions).

Each attack sits beside the honest flow it must not break:

- a node suggesting a 10^6 gwei tip, for the first signature (refused, no nonce taken) and
  for a replacement (ignored: the tracker's own bounded bump is signed and included);
- a nonce gap held open: the stuck transaction behind it is never re-signed; once the gap is
  filled and confirmed it is replaced once, within its ceiling, and included;
- replacements up to the fee ceiling, then given up (status, error naming the rule, webhook);
- a policy bounding ``eth.tx.max_fee_per_gas``: a replacement within it is signed and
  included, one beyond it is never signed (the transaction is given up naming the policy);
- the same bound against fees walletd fills in for the first signature: a node suggesting
  fees above the policy's bound (but under the sanity bound) gets the send denied (403
  naming the policy, no nonce taken, nothing signed); honest advice within it is signed and
  included.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
from eth_account import Account
from turnkey_sdk_types import (
    CreatePolicyBody,
    CreateUsersBody,
    CreateWalletBody,
    CreateWebhookEndpointBody,
    v1WebhookSubscriptionParams,
)

from tests.support.anvil import CAIP2, Anvil
from tests.support.deployment import Deployment, Key, make_organization
from tests.support.interop import node_with
from tests.support.keys import make_key
from tests.support.raw_api import RawApi
from tests.support.webhook_receiver import WebhookReceiver

GWEI = 10**9
#: The base fee of every block the market mines: a transaction under it is stuck.
BASE_FEE = 10 * GWEI
STUCK_FEE = int(9.5 * GWEI)  # under the base fee: stuck until replaced (x1.125 is above it)
HOSTILE_TIP = 10**6 * GWEI
FEE_CAP_MULTIPLE = 1.2  # one bump (x1.125) fits under it, two (x1.266) do not
SUGGESTED_FEE_MAX_GWEI = 100
ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


@dataclass
class Market:
    """A JSON-RPC peer in front of anvil: forwards, records, mines after sends, can lie."""

    anvil: Anvil
    #: ``eth_maxPriorityFeePerGas`` answers this instead of anvil's (wei), when set.
    lie_tip: int | None = None
    lies: int = 0
    calls: list[tuple[str, list[Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request.get("method", ""), request.get("params", [])
        with self.lock:
            self.calls.append((method, params))
            if method == "eth_maxPriorityFeePerGas" and self.lie_tip is not None:
                self.lies += 1
                return {"jsonrpc": "2.0", "id": request.get("id"), "result": hex(self.lie_tip)}
        reply: dict[str, Any] = requests.post(self.anvil.url, json=request, timeout=10).json()
        if method == "eth_sendRawTransaction":
            self.mine()
        return reply

    def mine(self) -> None:
        self.anvil.rpc("anvil_setNextBlockBaseFeePerGas", hex(BASE_FEE))
        self.anvil.rpc("evm_mine")

    def start(self) -> Market:
        market = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                out = json.dumps(market.answer(json.loads(body))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def sent(self, sender: str, nonce: int) -> list[dict[str, Any]]:
        """Every distinct transaction of ``sender`` with ``nonce`` walletd sent, as anvil
        knows them (oldest first)."""
        with self.lock:
            raws = [p[0] for m, p in self.calls if m == "eth_sendRawTransaction"]
        found: dict[str, dict[str, Any]] = {}
        for raw in raws:
            tx = Account.recover_transaction(raw)
            if tx.lower() != sender.lower():
                continue
            decoded = _decode(raw)
            if decoded["nonce"] == nonce:
                found.setdefault(decoded["hash"], decoded)
        return list(found.values())

    def count(self, method: str, first_param: str) -> int:
        with self.lock:
            return sum(1 for m, p in self.calls
                       if m == method and p and str(p[0]).lower() == first_param.lower())


def _decode(raw: str) -> dict[str, Any]:
    from eth_account.typed_transactions import TypedTransaction
    from eth_utils import keccak
    from hexbytes import HexBytes

    data = bytes.fromhex(raw[2:])
    fields = TypedTransaction.from_bytes(HexBytes(data)).as_dict()
    return {"hash": "0x" + keccak(data).hex(), "nonce": fields["nonce"],
            "maxFeePerGas": fields["maxFeePerGas"],
            "maxPriorityFeePerGas": fields["maxPriorityFeePerGas"]}


@pytest.fixture(scope="module")
def anvil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Anvil]:
    node_with("@foundry-rs/anvil-linux-amd64")
    chain = Anvil(tmp_path_factory.mktemp("anvil-fees")).start()
    chain.rpc("evm_setAutomine", False)  # blocks come from the market, one per send
    yield chain
    chain.stop()


@pytest.fixture(scope="module")
def market(anvil: Anvil) -> Iterator[Market]:
    peer = Market(anvil).start()
    peer.mine()  # the node's fee advice follows the market's base fee from here on
    yield peer
    peer.stop()


@pytest.fixture
def honest(market: Market) -> Iterator[Market]:
    market.lie_tip = None
    yield market
    market.lie_tip = None


@pytest.fixture(scope="module")
def dep(market: Market, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    deployment = Deployment.embedded(tmp_path_factory.mktemp("broadcast-fees"), {
        "WALLETD_CHAIN_RPC": f"{CAIP2}={market.url}", "WALLETD_CHAIN_ALLOW": "127.0.0.1",
        "WALLETD_WEBHOOK_ALLOW": "127.0.0.1", "WALLETD_BROADCAST_POLL_MS": "200",
        "WALLETD_BROADCAST_STUCK_S": "1", "WALLETD_BROADCAST_MAX_REPLACEMENTS": "3",
        "WALLETD_BROADCAST_FEE_CAP_MULTIPLE": str(FEE_CAP_MULTIPLE),
        "WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI": str(SUGGESTED_FEE_MAX_GWEI)})
    yield deployment
    deployment.stop()


# --- helpers -------------------------------------------------------------------------------


def _account(dep: Deployment, anvil: Anvil, key: Key | None = None) -> str:
    created = dep.client(key).create_wallet(CreateWalletBody(
        walletName=f"fees-{uuid.uuid4().hex[:8]}", accounts=[ETH]))
    address = str(created.addresses[0])
    anvil.fund(address)
    return address


def _body(sender: str, **fees: int) -> dict[str, Any]:
    body: dict[str, Any] = {"from": sender, "caip2": CAIP2,
                            "calls": [{"to": str(Account.create().address), "value": "1000"}]}
    names = {"nonce": "nonce", "gas": "gasLimit", "fee": "maxFeePerGas",
             "tip": "maxPriorityFeePerGas"}
    body.update({names[k]: str(v) for k, v in fees.items()})
    return body


def _stuck(sender: str, nonce: int, fee: int = STUCK_FEE) -> dict[str, Any]:
    """A send under the market's base fee: it stays stuck until replaced."""
    return _body(sender, nonce=nonce, gas=21000, fee=fee, tip=GWEI)


def _send(api: RawApi, body: dict[str, Any]) -> str:
    result = api.ok("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", body)
    return str(result["sendTransactionStatusId"])


def _status(api: RawApi, status_id: str) -> dict[str, Any]:
    return api.read("get_send_transaction_status", {"sendTransactionStatusId": status_id})


def _until(what: Callable[[], Any], timeout: float = 90) -> Any:
    """``what()`` once truthy (a generous upper bound; the test fails if never)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not reached")


def _settled(api: RawApi, status_id: str) -> dict[str, Any]:
    return dict(_until(lambda: (s := _status(api, status_id))["txStatus"]
                       in ("INCLUDED", "FAILED") and s))


def _ceiling(first: dict[str, Any]) -> tuple[int, int]:
    return (int(first["maxFeePerGas"] * FEE_CAP_MULTIPLE),
            int(first["maxPriorityFeePerGas"] * FEE_CAP_MULTIPLE))


# --- a hostile node's fee advice -----------------------------------------------------------


def test_a_hostile_node_cannot_choose_the_first_fee(dep: Deployment, anvil: Anvil,
                                                    honest: Market) -> None:
    """The attacker runs (or has hijacked) the RPC endpoint and suggests a 10^6 gwei tip to a
    send that leaves its fees to walletd: the send is refused naming the bound, before any
    nonce is taken; with honest advice the same send goes out with nonce 0."""
    api = RawApi(dep, dep.root, dep.root.organization_id)
    sender = _account(dep, anvil)
    honest.lie_tip = HOSTILE_TIP
    refused = api.submit("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2",
                         _body(sender))
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert set(body) == {"code", "message", "details"}
    assert "WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI" in body["message"]
    assert honest.lies >= 1
    assert not honest.sent(sender, 0)  # nothing signed was sent
    nonces = api.read("get_nonces", {"address": sender, "caip2": CAIP2})
    assert nonces == {"nonce": "0"}

    honest.lie_tip = None
    status_id = _send(api, _body(sender))
    final = _settled(api, status_id)
    assert final["txStatus"] == "INCLUDED", final
    tx = anvil.rpc("eth_getTransactionByHash", final["eth"]["txHash"])
    assert int(tx["nonce"], 16) == 0
    assert int(tx["maxPriorityFeePerGas"], 16) <= SUGGESTED_FEE_MAX_GWEI * GWEI


def test_a_hostile_node_cannot_raise_a_replacement(dep: Deployment, anvil: Anvil,
                                                   honest: Market) -> None:
    """A transaction is stuck; the node now suggests a 10^6 gwei tip. The replacement walletd
    signs ignores it: the tracker's own 12.5 % bump, within the ceiling, is what the chain
    includes."""
    api = RawApi(dep, dep.root, dep.root.organization_id)
    sender = _account(dep, anvil)
    honest.lie_tip = HOSTILE_TIP
    lies_before = honest.lies
    status_id = _send(api, _stuck(sender, 0))
    final = _settled(api, status_id)
    assert final["txStatus"] == "INCLUDED", final
    assert honest.lies > lies_before  # the advice was asked for, and not taken
    first, *replacements = honest.sent(sender, 0)
    assert replacements, "the stuck transaction was never replaced"
    max_fee, max_tip = _ceiling(first)
    for tx in replacements:
        assert tx["maxPriorityFeePerGas"] <= max_tip < HOSTILE_TIP
        assert tx["maxFeePerGas"] <= max_fee
    included = anvil.rpc("eth_getTransactionByHash", final["eth"]["txHash"])
    assert int(included["maxPriorityFeePerGas"], 16) == GWEI * 9 // 8 + 1
    assert final["eth"]["txHash"] == replacements[-1]["hash"]


# --- a nonce gap ---------------------------------------------------------------------------


def test_a_transaction_behind_a_nonce_gap_waits_then_is_replaced_once(
        dep: Deployment, anvil: Anvil, honest: Market) -> None:
    """Nonce 1 is sent while nonce 0 is missing: re-signing it cannot help (and would bump its
    fee every pass), so it waits however long the gap stays open. Once nonce 0 is confirmed
    it is stuck on its own (under the base fee) and is replaced once, within its ceiling."""
    api = RawApi(dep, dep.root, dep.root.organization_id)
    sender = _account(dep, anvil)
    waiting = _send(api, _stuck(sender, 1))
    # The tracker looked at the gap several times (each a confirmed-count read for sender).
    _until(lambda: honest.count("eth_getTransactionCount", sender) >= 4
           and honest.count("eth_getTransactionCount", sender))
    status = _status(api, waiting)
    assert status["txStatus"] == "BROADCASTING", status
    (only,) = honest.sent(sender, 1)
    assert status["eth"]["txHash"] == only["hash"]

    filler = _send(api, _body(sender, nonce=0, gas=21000, fee=20 * GWEI, tip=GWEI))
    assert _settled(api, filler)["txStatus"] == "INCLUDED"
    final = _settled(api, waiting)
    assert final["txStatus"] == "INCLUDED", final
    first, *replacements = honest.sent(sender, 1)
    assert len(replacements) == 1
    assert final["eth"]["txHash"] == replacements[0]["hash"] != first["hash"]
    max_fee, max_tip = _ceiling(first)
    assert BASE_FEE <= replacements[0]["maxFeePerGas"] <= max_fee
    assert replacements[0]["maxPriorityFeePerGas"] <= max_tip
    assert anvil.nonce(sender) == 2


# --- the ceiling ---------------------------------------------------------------------------


def test_replacements_stop_at_the_fee_ceiling_and_say_so(dep: Deployment, anvil: Anvil,
                                                         honest: Market) -> None:
    """A transaction that no bump within its ceiling gets included (8.8 gwei, once bumped
    9.9 gwei, under the 10 gwei base fee): it is replaced while the bump fits under x1.2, then
    given up: FAILED naming the rule, announced by webhook, and nothing more is signed."""
    api = RawApi(dep, dep.root, dep.root.organization_id)
    with WebhookReceiver() as receiver:
        dep.client().create_webhook_endpoint(CreateWebhookEndpointBody(
            url=receiver.url, name=f"fees-{uuid.uuid4().hex[:6]}",
            subscriptions=[v1WebhookSubscriptionParams(
                eventType="SEND_TRANSACTION_STATUS_UPDATES")]))
        sender = _account(dep, anvil)
        status_id = _send(api, _stuck(sender, 0, fee=int(8.8 * GWEI)))
        final = _settled(api, status_id)
        assert final["txStatus"] == "FAILED", final
        assert "WALLETD_BROADCAST_FEE_CAP_MULTIPLE" in final["txError"]
        first, *replacements = honest.sent(sender, 0)
        assert len(replacements) == 1  # x1.125 fits under x1.2; x1.266 does not
        max_fee, max_tip = _ceiling(first)
        assert all(tx["maxFeePerGas"] <= max_fee and tx["maxPriorityFeePerGas"] <= max_tip
                   for tx in replacements)
        assert final["eth"]["txHash"] == replacements[-1]["hash"]

        def failed() -> list[dict[str, Any]]:
            return [r.json() for r in list(receiver.requests)
                    if r.json()["msg"]["sendTransactionStatusId"] == status_id
                    and r.json()["msg"]["txStatus"] == "FAILED"]

        (hook,) = _until(failed)
        assert hook["type"] == "SEND_TRANSACTION_STATUS_UPDATES"
        assert "WALLETD_BROADCAST_FEE_CAP_MULTIPLE" in hook["msg"]["txError"]


def test_replacements_stop_at_their_count_and_say_so(market: Market, anvil: Anvil,
                                                    tmp_path_factory: pytest.TempPathFactory
                                                    ) -> None:
    """With one replacement allowed, a transaction still stuck after it is given up, naming
    WALLETD_BROADCAST_MAX_REPLACEMENTS; nothing more is signed. (The x2 ceiling keeps the
    node's honest 18.5 gwei advice out, so the one replacement is the 9.9 gwei bump.)"""
    market.lie_tip = None
    one = Deployment.embedded(tmp_path_factory.mktemp("broadcast-count"), {
        "WALLETD_CHAIN_RPC": f"{CAIP2}={market.url}", "WALLETD_CHAIN_ALLOW": "127.0.0.1",
        "WALLETD_BROADCAST_POLL_MS": "200", "WALLETD_BROADCAST_STUCK_S": "1",
        "WALLETD_BROADCAST_MAX_REPLACEMENTS": "1", "WALLETD_BROADCAST_FEE_CAP_MULTIPLE": "2"})
    try:
        api = RawApi(one, one.root, one.root.organization_id)
        sender = _account(one, anvil)
        status_id = _send(api, _stuck(sender, 0, fee=int(8.8 * GWEI)))  # 9.9 once bumped
        final = _settled(api, status_id)
        assert final["txStatus"] == "FAILED", final
        assert "WALLETD_BROADCAST_MAX_REPLACEMENTS=1" in final["txError"]
        _, replacement = market.sent(sender, 0)
        assert final["eth"]["txHash"] == replacement["hash"]
    finally:
        one.stop()


# --- policies hold for replacements --------------------------------------------------------


def _member(dep: Deployment, root: Key) -> Key:
    key = make_key()
    created = dep.client(root).create_users(CreateUsersBody(users=[{
        "userName": f"sender-{uuid.uuid4().hex[:6]}", "apiKeys": [key.api_key_params()],
        "authenticators": [], "oauthProviders": [], "userTags": []}]))
    return Key(root.organization_id, created.userIds[0], key.public_key, key.private_key)


def _fee_bound(dep: Deployment, max_fee: int) -> tuple[Key, Key, str]:
    """An organization whose non-root member may send, under a DENY policy on fees above
    ``max_fee`` wei per gas: (root, member, the DENY policy's id)."""
    root = make_organization(dep, f"fee-policy-{uuid.uuid4().hex[:6]}")
    member = _member(dep, root)
    dep.client(root).create_policy(CreatePolicyBody(
        policyName="the member sends", effect="EFFECT_ALLOW", notes="",
        condition="activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2'",
        consensus=f"approvers.any(user, user.id == '{member.user_id}')"))
    deny = dep.client(root).create_policy(CreatePolicyBody(
        policyName=f"no fee above {max_fee / GWEI:g} gwei", effect="EFFECT_DENY", notes="",
        condition="activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2' && "
                  f"eth.tx.max_fee_per_gas > {max_fee}"))
    return root, member, str(deny.policyId)


@pytest.fixture
def bounded(dep: Deployment) -> tuple[Key, Key, str]:
    """The member's sends are denied above 10.6 gwei per gas."""
    return _fee_bound(dep, int(10.6 * GWEI))


def test_a_policy_bound_on_fees_holds_for_replacements(dep: Deployment, anvil: Anvil,
                                                       honest: Market,
                                                       bounded: tuple[Key, Key, str]) -> None:
    """The member holds an API key that policies let send with fees up to 10.6 gwei. A send at
    9.5 gwei is allowed; its replacement would need 10.69 gwei: the policy engine decides the
    re-signed transaction too, so it is never signed and the send is given up, naming the
    policy. Beside it, a send at 9.4 gwei is replaced at 10.575 gwei (within the policy) and
    included."""
    root, member, deny_id = bounded
    sender = _account(dep, anvil, root)
    api = RawApi(dep, member, member.organization_id)

    within = _send(api, _stuck(sender, 0, fee=int(9.4 * GWEI)))
    final = _settled(api, within)
    assert final["txStatus"] == "INCLUDED", final
    _, replacement = honest.sent(sender, 0)
    assert replacement["maxFeePerGas"] <= 10.6 * GWEI < replacement["maxFeePerGas"] * 9 // 8

    beyond = _send(api, _stuck(sender, 1))
    final = _settled(api, beyond)
    assert final["txStatus"] == "FAILED", final
    assert "policies do not allow the replacement" in final["txError"]
    assert deny_id in final["txError"]
    (only,) = honest.sent(sender, 1)  # the replacement was never signed nor sent
    assert final["eth"]["txHash"] == only["hash"]


# --- policies hold for the fees walletd fills in -------------------------------------------

#: The DENY policy's bound for the first signature: above the honest advice (about 18.5 gwei:
#: twice the next base fee plus a 1 gwei tip), under the sanity bound (100 gwei).
POLICY_MAX_FEE = 50 * GWEI
#: The hostile node's tip: with it, walletd's filled-in fee is about 77.5 gwei.
POLICY_TESTING_TIP = 60 * GWEI


def test_a_policy_bound_on_fees_holds_for_the_fees_walletd_fills_in(
        dep: Deployment, anvil: Anvil, honest: Market) -> None:
    """The attacker runs the RPC endpoint. The member holds an API key that policies let send
    with fees up to 50 gwei, and leaves the fees to walletd (the policies, deciding on the
    intent, see none). The node suggests a 60 gwei tip: under the sanity bound, so walletd
    would use it, but the policies judge the filled-in transaction before any nonce is taken:
    403 naming the policy, nothing signed, no nonce taken. With honest advice the member's
    same send is signed within the bound and included with nonce 0."""
    root, member, deny_id = _fee_bound(dep, POLICY_MAX_FEE)
    sender = _account(dep, anvil, root)
    api = RawApi(dep, member, member.organization_id)
    honest.lie_tip = POLICY_TESTING_TIP
    lies_before = honest.lies
    refused = api.submit("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2",
                         _body(sender))
    assert refused.status_code == 403, refused.text
    body = refused.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == 7
    assert body["message"].startswith("policy engine denied request explicitly")
    assert deny_id in body["message"]
    assert "filled in" in body["message"]
    assert honest.lies > lies_before  # the hostile advice was asked for, and not signed
    assert not honest.sent(sender, 0)
    assert api.read("get_nonces", {"address": sender, "caip2": CAIP2}) == {"nonce": "0"}
    activities = api.read("list_activities", {
        "filterByType": ["ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2"]})["activities"]
    (failed,) = activities
    assert failed["status"] == "ACTIVITY_STATUS_FAILED"
    assert not failed.get("result")
    assert deny_id in failed["failure"]["message"]

    honest.lie_tip = None
    status_id = _send(api, _body(sender))
    final = _settled(api, status_id)
    assert final["txStatus"] == "INCLUDED", final
    tx = anvil.rpc("eth_getTransactionByHash", final["eth"]["txHash"])
    assert int(tx["nonce"], 16) == 0
    assert int(tx["maxFeePerGas"], 16) <= POLICY_MAX_FEE
    assert int(tx["maxPriorityFeePerGas"], 16) < POLICY_TESTING_TIP
