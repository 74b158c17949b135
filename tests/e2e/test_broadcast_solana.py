"""``sol_send_transaction`` (V1 through ``@turnkey/sdk-server``, V2 raw) against a Solana
JSON-RPC façade over LiteSVM (``tests/support/litesvm_rpc.py``): transfers land and move
lamports, walletd fills the blockhash when asked, preflight failures carry the node's logs, a
send the node dropped is sent again, and an expired blockhash ends the transaction FAILED.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction
from turnkey_sdk_types import CreateWalletBody

from tests.e2e.test_broadcast import wait_status
from tests.support.deployment import Deployment
from tests.support.interop import node_with, run_script
from tests.support.litesvm_rpc import GENESIS, SolanaRpc
from tests.support.paths import deployment_on
from tests.support.raw_api import RawApi

SOL = {"curve": "CURVE_ED25519", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/501'/0'/0'", "addressFormat": "ADDRESS_FORMAT_SOLANA"}


@pytest.fixture(scope="module")
def solana() -> Iterator[SolanaRpc]:
    chain = SolanaRpc().start()
    yield chain
    chain.stop()


@pytest.fixture(scope="module", params=["embedded", "production"])
def sol_dep(request: pytest.FixtureRequest, solana: SolanaRpc,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    env = {"WALLETD_CHAIN_RPC": f"{GENESIS}={solana.url}", "WALLETD_CHAIN_ALLOW": "127.0.0.1",
           "WALLETD_BROADCAST_POLL_MS": "200"}
    workdir = tmp_path_factory.mktemp(f"solana-{request.param}")
    with deployment_on(request.param, workdir, env) as dep:
        yield dep


def _account(dep: Deployment, solana: SolanaRpc, lamports: int = 10**10) -> str:
    created = dep.client().create_wallet(CreateWalletBody(
        walletName=f"sol-{uuid.uuid4().hex[:8]}", accounts=[SOL]))
    address = str(created.addresses[0])
    solana.airdrop(address, lamports)
    return address


def _transfer(sender: str, recipient: str, lamports: int, blockhash: Hash) -> bytes:
    ix = transfer(TransferParams(from_pubkey=Pubkey.from_string(sender),
                                 to_pubkey=Pubkey.from_string(recipient), lamports=lamports))
    message = Message.new_with_blockhash([ix], Pubkey.from_string(sender), blockhash)
    return bytes(VersionedTransaction.populate(message, [Signature.default()]))


def _send_v2(dep: Deployment, sender: str, raw: bytes, **extra: Any) -> str:
    api = RawApi(dep, dep.root, dep.root.organization_id)
    result = api.ok("sol_send_transaction", "ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2", {
        "unsignedTransaction": raw.hex(), "signWiths": [sender], "caip2": GENESIS, **extra})
    return str(result["sendTransactionStatusId"])


def test_sdk_server_sends_a_transfer(sol_dep: Deployment, solana: SolanaRpc) -> None:
    node = node_with("@turnkey/sdk-server")
    sender, recipient = _account(sol_dep, solana), str(Keypair().pubkey())
    raw = _transfer(sender, recipient, 1_000_000, solana.blockhash())
    root = sol_dep.root
    out = run_script(node, "broadcast_interop.mjs", {
        "op": "solSend", "baseUrl": sol_dep.base_url, "organizationId": root.organization_id,
        "publicKey": root.public_key, "privateKey": root.private_key,
        "transaction": {"unsignedTransaction": base64.b64encode(raw).decode(),
                        "signWith": sender, "caip2": GENESIS}})["result"]
    status = out["status"]
    assert status["txStatus"] == "INCLUDED", status
    assert status["solana"]["signature"]
    assert solana.balance(recipient) == 1_000_000


def test_walletd_fills_the_blockhash_when_asked(sol_dep: Deployment, solana: SolanaRpc) -> None:
    sender, recipient = _account(sol_dep, solana), str(Keypair().pubkey())
    status_id = _send_v2(sol_dep, sender, _transfer(sender, recipient, 1_500_000, Hash.default()))
    assert wait_status(sol_dep, status_id)["txStatus"] == "INCLUDED"
    assert solana.balance(recipient) == 1_500_000


def test_a_preflight_failure_carries_the_node_logs(sol_dep: Deployment,
                                                   solana: SolanaRpc) -> None:
    sender = _account(sol_dep, solana, lamports=10_000_000)
    raw = _transfer(sender, str(Keypair().pubkey()), 10**12, solana.blockhash())
    status = wait_status(sol_dep, _send_v2(sol_dep, sender, raw))
    assert status["txStatus"] == "FAILED", status
    details = status["error"]["solana"]
    assert details["source"] == "preflight"
    assert details["logs"], details
    assert "simulation failed" in status["txError"]


def test_a_dropped_send_is_sent_again(sol_dep: Deployment, solana: SolanaRpc) -> None:
    sender, recipient = _account(sol_dep, solana), str(Keypair().pubkey())
    solana.accept_sends = False
    try:
        status_id = _send_v2(sol_dep, sender, _transfer(sender, recipient, 2_000_000,
                                                        solana.blockhash()))
        assert wait_status(sol_dep, status_id, until=("BROADCASTING",))["txStatus"] == \
            "BROADCASTING"
    finally:
        solana.accept_sends = True
    assert wait_status(sol_dep, status_id)["txStatus"] == "INCLUDED"
    assert solana.balance(recipient) == 2_000_000


def test_an_expired_blockhash_fails_the_send(sol_dep: Deployment, solana: SolanaRpc) -> None:
    sender = _account(sol_dep, solana)
    solana.accept_sends = False
    try:
        status_id = _send_v2(sol_dep, sender, _transfer(sender, str(Keypair().pubkey()), 1,
                                                        solana.blockhash()))
        wait_status(sol_dep, status_id, until=("BROADCASTING",))
        solana.expire_all_blockhashes()
        status = wait_status(sol_dep, status_id)
    finally:
        solana.accept_sends = True
    assert status["txStatus"] == "FAILED", status
    assert "expired" in status["txError"]


def test_sponsored_sends_are_refused(sol_dep: Deployment, solana: SolanaRpc) -> None:
    sender = _account(sol_dep, solana)
    api = RawApi(sol_dep, sol_dep.root, sol_dep.root.organization_id)
    response = api.submit("sol_send_transaction", "ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2", {
        "unsignedTransaction": _transfer(sender, sender, 1, solana.blockhash()).hex(),
        "signWiths": [sender], "caip2": GENESIS, "sponsor": True})
    assert response.status_code == 400, response.text
    assert "sponsor" in response.text
