"""Transaction management against a real local chain (anvil), with the official clients.

``eth_send_transaction`` (V1 through ``@turnkey/sdk-server``, V2 through ``@turnkey/core``'s
client), ``get_send_transaction_status``, ``get_nonces`` and ``eth_undelegate_7702`` on both
paths (``walletd up`` and PostgreSQL + RabbitMQ): balances move on the chain, contract calls
land, reverts are reported with their reason, and the nonce manager hands out consecutive
nonces under concurrency. The crash and restart tests are in ``test_broadcast_faults.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import rlp
from eth_abi import encode as abi_encode
from eth_account import Account
from eth_utils import keccak
from turnkey_sdk_types import CreateWalletBody

from tests.support.anvil import CAIP2, CHAIN_ID, Anvil
from tests.support.deployment import Deployment
from tests.support.interop import node_with, run_script
from tests.support.paths import deployment_on
from tests.support.raw_api import RawApi

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}
COUNTER = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Counter {
    uint256 public count;
    error TooBig(uint256 value);
    function add(uint256 by) external {
        require(by > 0, "by must be positive");
        if (by > 100) revert TooBig(by);
        count += by;
    }
}"""


def chain_env(anvil: Anvil, **extra: str) -> dict[str, str]:
    return {"WALLETD_CHAIN_RPC": f"{CAIP2}={anvil.url}", "WALLETD_CHAIN_ALLOW": "127.0.0.1",
            "WALLETD_WEBHOOK_ALLOW": "127.0.0.1", "WALLETD_BROADCAST_POLL_MS": "200",
            "WALLETD_BROADCAST_STUCK_S": "600", **extra}


@pytest.fixture(scope="module")
def node() -> str:
    return node_with("@foundry-rs/anvil-linux-amd64", "solc", "@turnkey/sdk-server")


@pytest.fixture(scope="module")
def anvil(tmp_path_factory: pytest.TempPathFactory, node: str) -> Iterator[Anvil]:
    chain = Anvil(tmp_path_factory.mktemp("anvil")).start()
    yield chain
    chain.stop()


@pytest.fixture(scope="module", params=["embedded", "production"])
def chain_dep(request: pytest.FixtureRequest, anvil: Anvil,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    workdir = tmp_path_factory.mktemp(f"broadcast-{request.param}")
    with deployment_on(request.param, workdir, chain_env(anvil)) as dep:
        yield dep


def js(node: str, dep: Deployment, op: str, **request: Any) -> Any:
    root = dep.root
    return run_script(node, "broadcast_interop.mjs", {
        "op": op, "baseUrl": dep.base_url, "organizationId": root.organization_id,
        "publicKey": root.public_key, "privateKey": root.private_key, **request},
        timeout=120)["result"]


def funded_account(dep: Deployment, anvil: Anvil, wei: int = 10**20) -> str:
    created = dep.client().create_wallet(CreateWalletBody(
        walletName=f"broadcast-{uuid.uuid4().hex[:8]}", accounts=[ETH]))
    address = str(created.addresses[0])
    anvil.fund(address, wei)
    return address


def fresh_address() -> str:
    return str(Account.create().address)


def deploy_counter(node: str, dep: Deployment, anvil: Anvil) -> tuple[str, list[Any]]:
    compiled = js(node, dep, "compile", source=COUNTER, name="Counter")
    receipt = anvil.send_from_funder({"data": compiled["bytecode"]})
    return str(receipt["contractAddress"]), compiled["abi"]


def add_call(by: int) -> str:
    return "0x" + (keccak(text="add(uint256)")[:4] + abi_encode(["uint256"], [by])).hex()


def test_a_transfer_moves_the_balance_on_chain(node: str, chain_dep: Deployment,
                                               anvil: Anvil) -> None:
    sender, recipient = funded_account(chain_dep, anvil), fresh_address()
    out = js(node, chain_dep, "sendAndPoll", transaction={
        "from": sender, "caip2": CAIP2, "to": recipient, "value": str(10**15)})
    status = out["status"]
    assert status["txStatus"] == "INCLUDED", status
    receipt = anvil.receipt(status["eth"]["txHash"])
    assert int(receipt["status"], 16) == 1
    assert receipt["from"].lower() == sender.lower()
    assert anvil.balance(recipient) == 10**15


def test_core_v2_calls_a_contract(node: str, chain_dep: Deployment, anvil: Anvil) -> None:
    contract, _ = deploy_counter(node, chain_dep, anvil)
    sender = funded_account(chain_dep, anvil)
    sent = js(node, chain_dep, "sendV2", transaction={
        "from": sender, "caip2": CAIP2, "calls": [{"to": contract, "data": add_call(7)}]})
    status = js(node, chain_dep, "poll", sendTransactionStatusId=sent["sendTransactionStatusId"])
    assert status["txStatus"] == "INCLUDED", status
    count = anvil.rpc("eth_call", {"to": contract, "data": "0x06661abd"}, "latest")
    assert int(count, 16) == 7


def test_a_revert_is_reported_with_its_reason(node: str, chain_dep: Deployment,
                                              anvil: Anvil) -> None:
    contract, _ = deploy_counter(node, chain_dep, anvil)
    sender = funded_account(chain_dep, anvil)
    # Pre-flight: the estimate reverts, nothing is broadcast and no nonce is spent.
    before = anvil.nonce(sender)
    out = js(node, chain_dep, "sendAndPoll", transaction={
        "from": sender, "caip2": CAIP2, "to": contract, "data": add_call(0)})
    status = out["status"]
    assert status["txStatus"] == "FAILED"
    [entry] = status["error"]["revertChain"]
    assert entry["native"] == {"nativeType": "error_string", "message": "by must be positive"}
    assert entry["address"].lower() == contract.lower()
    assert "by must be positive" in status["txError"]
    assert anvil.nonce(sender) == before
    # With a gas limit given, no estimate: it is mined, reverts, and the custom error is named.
    out = js(node, chain_dep, "sendAndPoll", transaction={
        "from": sender, "caip2": CAIP2, "to": contract, "data": add_call(1000),
        "gasLimit": "100000"})
    status = out["status"]
    assert status["txStatus"] == "FAILED", status
    receipt = anvil.receipt(status["eth"]["txHash"])
    assert int(receipt["status"], 16) == 0
    [entry] = status["error"]["revertChain"]
    selector = "0x" + keccak(text="TooBig(uint256)")[:4].hex()
    assert entry["unknown"]["selector"] == selector
    assert anvil.nonce(sender) == before + 1


def test_get_nonces_counts_what_walletd_sent(node: str, chain_dep: Deployment,
                                             anvil: Anvil) -> None:
    sender = funded_account(chain_dep, anvil)
    for _ in range(2):
        js(node, chain_dep, "sendAndPoll", transaction={
            "from": sender, "caip2": CAIP2, "to": fresh_address(), "value": "1"})
    assert js(node, chain_dep, "nonces", address=sender, caip2=CAIP2) == {"nonce": "2"}


@pytest.mark.parametrize("parameters, field", [
    ({"caip2": "eip155:1"}, "caip2"),
    ({"sponsor": True}, "sponsor"),
    ({"calls": [{"to": "0x" + "11" * 20}, {"to": "0x" + "22" * 20}]}, "calls"),
    ({"calls": [{"to": "0x1234"}]}, "calls[0].to"),
    ({"nonce": "-1"}, "nonce"),
])
def test_bad_sends_are_clear_400s(chain_dep: Deployment, anvil: Anvil,
                                  parameters: dict[str, Any], field: str) -> None:
    sender = funded_account(chain_dep, anvil)
    api = RawApi(chain_dep, chain_dep.root, chain_dep.root.organization_id)
    body = {"from": sender, "caip2": CAIP2, "calls": [{"to": fresh_address(), "value": "1"}],
            **parameters}
    response = api.submit("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", body)
    assert response.status_code == 400, response.text
    assert field in response.text


def test_fifty_concurrent_sends_get_consecutive_nonces(chain_dep: Deployment,
                                                        anvil: Anvil) -> None:
    sender = funded_account(chain_dep, anvil)
    recipient = fresh_address()
    api = RawApi(chain_dep, chain_dep.root, chain_dep.root.organization_id)

    def send(i: int) -> str:
        result = api.ok("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", {
            "from": sender, "caip2": CAIP2, "calls": [{"to": recipient, "value": str(i + 1)}]})
        return str(result["sendTransactionStatusId"])

    with ThreadPoolExecutor(max_workers=10) as pool:
        ids = list(pool.map(send, range(50)))
    hashes = []
    for status_id in ids:
        status = wait_status(chain_dep, status_id)
        assert status["txStatus"] == "INCLUDED", status
        hashes.append(status["eth"]["txHash"])
    nonces = sorted(int(anvil.rpc("eth_getTransactionByHash", h)["nonce"], 16) for h in hashes)
    assert nonces == list(range(50))
    assert anvil.nonce(sender) == 50
    assert anvil.balance(recipient) == sum(range(1, 51))


def wait_status(dep: Deployment, status_id: str, timeout: float = 60,
                until: tuple[str, ...] = ("INCLUDED", "FAILED")) -> dict[str, Any]:
    import time

    api = RawApi(dep, dep.root, dep.root.organization_id)
    deadline = time.monotonic() + timeout
    while True:
        status = api.read("get_send_transaction_status", {"sendTransactionStatusId": status_id})
        if status["txStatus"] in until or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def _authorization_hash(chain_id: int, delegate: str, nonce: int) -> bytes:
    return keccak(b"\x05" + rlp.encode([chain_id, bytes.fromhex(delegate[2:]), nonce]))


def test_undelegate_clears_an_eip7702_delegation(chain_dep: Deployment, anvil: Anvil) -> None:
    account = funded_account(chain_dep, anvil)
    delegate = fresh_address()
    api = RawApi(chain_dep, chain_dep.root, chain_dep.root.organization_id)
    # The account authorizes a delegation (signed by walletd), sent by anvil's funder.
    nonce = anvil.nonce(account)
    digest = _authorization_hash(CHAIN_ID, delegate, nonce)
    signed = api.ok("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
        "signWith": account, "payload": digest.hex(), "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
        "hashFunction": "HASH_FUNCTION_NO_OP"})
    authorization = {"chainId": CHAIN_ID, "address": delegate, "nonce": nonce,
                     "yParity": int(signed["v"], 16) % 27 if int(signed["v"], 16) >= 27
                     else int(signed["v"], 16),
                     "r": int(signed["r"], 16), "s": int(signed["s"], 16)}
    anvil.send_from_funder({"type": 4, "to": account, "authorizationList": [authorization],
                            "gas": 100_000})
    assert anvil.rpc("eth_getCode", account, "latest") == "0xef0100" + delegate[2:].lower()
    result = api.ok("eth_undelegate_7702", "ACTIVITY_TYPE_ETH_UNDELEGATE_7702",
                    {"from": account, "caip2": CAIP2})
    status = wait_status(chain_dep, result["sendTransactionStatusId"])
    assert status["txStatus"] == "INCLUDED", status
    assert anvil.rpc("eth_getCode", account, "latest") == "0x"


def test_status_of_another_organization_is_not_found(chain_dep: Deployment,
                                                     anvil: Anvil) -> None:
    from tests.support.deployment import make_organization

    sender = funded_account(chain_dep, anvil)
    api = RawApi(chain_dep, chain_dep.root, chain_dep.root.organization_id)
    result = api.ok("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", {
        "from": sender, "caip2": CAIP2, "calls": [{"to": fresh_address(), "value": "1"}]})
    other = make_organization(chain_dep, "Broadcast Other")
    theirs = RawApi(chain_dep, other, other.organization_id)
    response = theirs.query("get_send_transaction_status",
                            {"sendTransactionStatusId": result["sendTransactionStatusId"]})
    assert response.status_code == 404, response.text


def test_status_changes_reach_webhooks(chain_dep: Deployment, anvil: Anvil) -> None:
    import time

    from turnkey_sdk_types import CreateWebhookEndpointBody, v1WebhookSubscriptionParams

    from tests.support.webhook_receiver import WebhookReceiver

    with WebhookReceiver() as receiver:
        chain_dep.client().create_webhook_endpoint(CreateWebhookEndpointBody(
            url=receiver.url, name="send status",
            subscriptions=[v1WebhookSubscriptionParams(
                eventType="SEND_TRANSACTION_STATUS_UPDATES")]))
        sender = funded_account(chain_dep, anvil)
        api = RawApi(chain_dep, chain_dep.root, chain_dep.root.organization_id)
        result = api.ok("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", {
            "from": sender, "caip2": CAIP2, "calls": [{"to": fresh_address(), "value": "5"}]})
        status_id = result["sendTransactionStatusId"]
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while time.monotonic() < deadline and "INCLUDED" not in seen:
            seen = [r.json()["msg"]["txStatus"] for r in list(receiver.requests)
                    if r.json()["msg"]["sendTransactionStatusId"] == status_id]
            time.sleep(0.2)
        assert set(seen) == {"INITIALIZED", "BROADCASTING", "INCLUDED"}, seen
        included = next(r.json() for r in list(receiver.requests)
                        if r.json()["msg"]["sendTransactionStatusId"] == status_id
                        and r.json()["msg"]["txStatus"] == "INCLUDED")
        assert included["type"] == "SEND_TRANSACTION_STATUS_UPDATES"
        assert included["msg"]["eth"]["txHash"] == wait_status(chain_dep, status_id)["eth"]["txHash"]
        assert len(seen) == len(set(seen))  # one delivery per status
