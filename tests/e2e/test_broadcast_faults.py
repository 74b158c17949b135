"""Broadcasting under faults, against anvil: a stuck transaction is replaced with higher fees,
a signing worker SIGKILLed between signing and broadcast still gets its transaction included
exactly once, and transactions in flight survive a node restart that empties the mempool.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from eth_account import Account
from turnkey_sdk_types import CreateWalletBody

from tests.e2e.test_broadcast import ETH, chain_env, wait_status
from tests.support import services
from tests.support.anvil import CAIP2, Anvil
from tests.support.deployment import Deployment
from tests.support.interop import node_with
from tests.support.raw_api import RawApi


@pytest.fixture(scope="module")
def anvil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Anvil]:
    node_with("@foundry-rs/anvil-linux-amd64")
    chain = Anvil(tmp_path_factory.mktemp("anvil-faults")).start()
    yield chain
    chain.stop()


@pytest.fixture(scope="module")
def production(anvil: Anvil, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    pg, amqp = services.create_database(), services.create_vhost()
    # A tracker killed mid-step leaves its row to another after the lease: short here.
    dep = Deployment.production(tmp_path_factory.mktemp("broadcast-faults"), pg, amqp,
                                chain_env(anvil, WALLETD_BROADCAST_LEASE_S="6"))
    yield dep
    dep.stop()
    services.drop_database(pg)
    services.delete_vhost(amqp)


def _account(dep: Deployment, anvil: Anvil) -> str:
    created = dep.client().create_wallet(CreateWalletBody(
        walletName=f"faults-{uuid.uuid4().hex[:8]}", accounts=[ETH]))
    address = str(created.addresses[0])
    anvil.fund(address)
    return address


def _send(dep: Deployment, sender: str, **extra: Any) -> str:
    api = RawApi(dep, dep.root, dep.root.organization_id)
    result = api.ok("eth_send_transaction", "ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2", {
        "from": sender, "caip2": CAIP2,
        "calls": [{"to": str(Account.create().address), "value": "1000"}], **extra})
    return str(result["sendTransactionStatusId"])


def _wait(predicate: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


def test_a_stuck_transaction_is_replaced_with_higher_fees(
        anvil: Anvil, tmp_path_factory: pytest.TempPathFactory) -> None:
    dep = Deployment.embedded(tmp_path_factory.mktemp("stuck"),
                              chain_env(anvil, WALLETD_BROADCAST_STUCK_S="2"))
    try:
        sender = _account(dep, anvil)
        anvil.rpc("evm_setAutomine", False)
        try:
            status_id = _send(dep, sender)
            first = wait_status(dep, status_id, until=("BROADCASTING",))
            assert first["txStatus"] == "BROADCASTING"
            original = first["eth"]["txHash"]
            replaced = _wait(lambda: (s := wait_status(dep, status_id, timeout=0,
                                                       until=("BROADCASTING",)))
                             ["eth"]["txHash"] != original and s)
            replacement = replaced["eth"]["txHash"]
            # Let the tracker send it, then mine: the replacement is what the chain includes.
            _wait(lambda: anvil.rpc("eth_getTransactionByHash", replacement))
        finally:
            anvil.rpc("evm_setAutomine", True)
        anvil.rpc("evm_mine")
        final = wait_status(dep, status_id)
        assert final["txStatus"] == "INCLUDED", final
        included = final["eth"]["txHash"]
        receipt = anvil.receipt(included)
        assert int(receipt["status"], 16) == 1
        assert included != original
        assert anvil.rpc("eth_getTransactionReceipt", original) is None
        assert anvil.nonce(sender) == 1
        old = anvil.rpc("eth_getTransactionByHash", included)
        assert int(old["maxPriorityFeePerGas"], 16) > 0
    finally:
        dep.stop()


def test_a_worker_killed_before_broadcast_sends_exactly_once(production: Deployment,
                                                            anvil: Anvil) -> None:
    sender = _account(production, anvil)
    fees = {"nonce": str(anvil.nonce(sender)), "gasLimit": "21000",
            "maxFeePerGas": str(10**11), "maxPriorityFeePerGas": str(10**9)}
    anvil.pause()  # the node does not answer: the broadcast cannot complete
    try:
        status_id = _send(production, sender, **fees)  # signed and stored, no node needed
        assert wait_status(production, status_id, timeout=0)["txStatus"] == "INITIALIZED"
        time.sleep(1.0)  # the tracker is now waiting on the paused node
        production.kill("executors")
    finally:
        anvil.resume()
    production.start_worker("executors")
    final = wait_status(production, status_id, timeout=90)
    assert final["txStatus"] == "INCLUDED", final
    assert anvil.nonce(sender) == 1
    receipt = anvil.receipt(final["eth"]["txHash"])
    assert receipt["from"].lower() == sender.lower()
    block = anvil.rpc("eth_getBlockByNumber", receipt["blockNumber"], True)
    mine = [tx for tx in block["transactions"] if tx["from"].lower() == sender.lower()]
    assert len(mine) == 1


def test_transactions_in_flight_survive_a_node_restart(production: Deployment,
                                                       anvil: Anvil) -> None:
    sender = _account(production, anvil)
    anvil.rpc("evm_setAutomine", False)
    ids = [_send(production, sender) for _ in range(2)]
    for status_id in ids:
        assert wait_status(production, status_id, until=("BROADCASTING",))["txStatus"] == \
            "BROADCASTING"
    anvil.stop()  # the chain is kept (state file); the mempool is not
    anvil.start()
    anvil.rpc("evm_setAutomine", True)
    for status_id in ids:
        final = wait_status(production, status_id, timeout=90)
        assert final["txStatus"] == "INCLUDED", final
    assert anvil.nonce(sender) == 2
