"""A local EVM node for broadcast tests: Foundry's anvil from npm (``tests/interop``).

Started on a free loopback port with its state in a file, so a test can stop it and start it
again (a node restart) with the chain intact and the mempool gone.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from tests.support.deployment import free_port
from tests.support.interop import INTEROP, node_with

ANVIL = INTEROP / "node_modules" / "@foundry-rs" / "anvil-linux-amd64" / "bin" / "anvil"
CHAIN_ID = 31337
CAIP2 = f"eip155:{CHAIN_ID}"
#: anvil's first development account (its well-known test key), which funds the tests.
FUNDER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
FUNDER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
_ids = itertools.count(1)


@dataclass
class Anvil:
    """One running anvil and JSON-RPC to it."""

    workdir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Anvil:
        node_with("@foundry-rs/anvil-linux-amd64")
        log = open(self.workdir / "anvil.log", "ab")  # noqa: SIM115 (closed with the process)
        self.process = subprocess.Popen(
            [str(ANVIL), "--host", "127.0.0.1", "--port", str(self.port), "--chain-id",
             str(CHAIN_ID), "--state", str(self.workdir / "anvil-state.json"),
             "--hardfork", "prague"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.rpc("eth_chainId")
                return self
            except (requests.RequestException, RuntimeError):
                time.sleep(0.1)
        raise RuntimeError(f"anvil did not start: {(self.workdir / 'anvil.log').read_text()[-2000:]}")

    def stop(self) -> None:
        """Stop gracefully (anvil writes its state file on the way out)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self.process = None

    def pause(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGCONT)

    def rpc(self, method: str, *params: Any) -> Any:
        reply = requests.post(self.url, json={"jsonrpc": "2.0", "id": next(_ids), "method": method,
                                              "params": list(params)}, timeout=10).json()
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def fund(self, address: str, wei: int = 10**20) -> None:
        self.rpc("anvil_setBalance", address, hex(wei))

    def balance(self, address: str) -> int:
        return int(self.rpc("eth_getBalance", address, "latest"), 16)

    def nonce(self, address: str, block: str = "latest") -> int:
        return int(self.rpc("eth_getTransactionCount", address, block), 16)

    def send_from_funder(self, tx: dict[str, Any]) -> dict[str, Any]:
        """Sign with the development key, send, and return the receipt (automine)."""
        from eth_account import Account

        full = {"chainId": CHAIN_ID, "nonce": self.nonce(FUNDER, "pending"), "gas": 3_000_000,
                "maxFeePerGas": 10**11, "maxPriorityFeePerGas": 10**9, "value": 0, **tx}
        signed = Account.sign_transaction(full, FUNDER_KEY)
        tx_hash = self.rpc("eth_sendRawTransaction", "0x" + bytes(signed.raw_transaction).hex())
        return self.receipt(tx_hash)

    def receipt(self, tx_hash: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.rpc("eth_getTransactionReceipt", tx_hash)
            if found:
                return dict(found)
            time.sleep(0.1)
        raise AssertionError(f"no receipt for {tx_hash}")
