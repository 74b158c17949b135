"""A Solana JSON-RPC façade over ``solders``' LiteSVM, on loopback, for broadcast tests.

There is no Solana validator in any registry here; LiteSVM runs the real runtime in process.
This serves the handful of methods walletd's tracker and the tests use — getLatestBlockhash,
sendTransaction (base64, with preflight errors shaped as a validator's), getSignatureStatuses,
isBlockhashValid, getBalance, requestAirdrop, getSlot — so walletd talks JSON-RPC over HTTP
exactly as it would to a real node. Test support only; not part of walletd.
"""

from __future__ import annotations

import base64
import http.server
import json
import threading
from typing import Any

from solders.hash import Hash
from solders.litesvm import LiteSVM
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata

GENESIS = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"  # devnet's CAIP-2 name


class SolanaRpc:
    """The façade: a threaded HTTP server and the chain it fronts."""

    def __init__(self) -> None:
        self.svm = LiteSVM()
        self.lock = threading.Lock()
        self.slot = 1
        self.landed: dict[str, tuple[int, Any]] = {}
        self.recent: list[str] = [str(self.svm.latest_blockhash())]
        self.accept_sends = True
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length))
                try:
                    reply = {"jsonrpc": "2.0", "id": request.get("id"),
                             "result": outer.handle(request["method"], request.get("params", []))}
                except RpcFailure as ex:
                    reply = {"jsonrpc": "2.0", "id": request.get("id"),
                             "error": {"code": ex.code, "message": ex.message, "data": ex.data}}
                body = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> SolanaRpc:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _context(self, value: Any) -> dict[str, Any]:
        return {"context": {"slot": self.slot}, "value": value}

    def handle(self, method: str, params: list[Any]) -> Any:
        with self.lock:
            if method == "getLatestBlockhash":
                return self._context({"blockhash": str(self.svm.latest_blockhash()),
                                      "lastValidBlockHeight": self.slot + 150})
            if method == "getSlot":
                return self.slot
            if method == "getBalance":
                return self._context(self.svm.get_balance(Pubkey.from_string(params[0])) or 0)
            if method == "requestAirdrop":
                self.svm.airdrop(Pubkey.from_string(params[0]), int(params[1]))
                return "airdrop"
            if method == "isBlockhashValid":
                return self._context(params[0] in self.recent)
            if method == "getSignatureStatuses":
                values = []
                for signature in params[0]:
                    found = self.landed.get(signature)
                    values.append(None if found is None else {
                        "slot": found[0], "confirmations": None, "err": found[1],
                        "confirmationStatus": "finalized"})
                return self._context(values)
            if method == "sendTransaction":
                return self._send(params[0])
        raise RpcFailure(-32601, f"Method not found: {method}")

    def _send(self, encoded: str) -> str:
        tx = VersionedTransaction.from_bytes(base64.b64decode(encoded))
        signature = str(tx.signatures[0])
        if signature in self.landed:
            raise RpcFailure(-32002, "Transaction simulation failed: This transaction has "
                             "already been processed", {"err": "AlreadyProcessed", "logs": []})
        if not self.accept_sends:  # a node that accepts and then drops (a lost send)
            return signature
        result = self.svm.send_transaction(tx)
        if isinstance(result, FailedTransactionMetadata):
            raise RpcFailure(-32002, f"Transaction simulation failed: {_call(result.err)}",
                             {"err": str(_call(result.err)), "logs": list(_call(_call(result.meta).logs))})
        self.slot += 1
        self.landed[signature] = (self.slot, None)
        return signature

    def expire_all_blockhashes(self) -> None:
        with self.lock:
            self.svm.expire_blockhash()
            self.recent = [str(self.svm.latest_blockhash())]

    def balance(self, address: str) -> int:
        with self.lock:
            return int(self.svm.get_balance(Pubkey.from_string(address)) or 0)

    def airdrop(self, address: str, lamports: int) -> None:
        with self.lock:
            self.svm.airdrop(Pubkey.from_string(address), lamports)

    def blockhash(self) -> Hash:
        with self.lock:
            return self.svm.latest_blockhash()


class RpcFailure(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _call(value: Any) -> Any:
    """solders exposes some metadata as methods and some as properties, by version."""
    return value() if callable(value) else value
