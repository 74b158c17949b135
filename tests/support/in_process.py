"""One embedded walletd composition on a database, driven in process.

The ingress's entry points (``submit``, ``query``) and real dramatiq worker threads on the
in-process broker share one engine, so a test sees every statement a request costs, whichever
role sent it (``Statements``), and stamps requests the way ``turnkey-http`` does (``Client``).
Used by the statement-budget, access-cost and audit-log tests.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event

from infra.access import origin
from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.identity.root import KEY_FILE, ensure_root
from infra.messaging import queues
from infra.pipeline.submit import submit
from infra.queries_service import query
from infra.settings import Settings
from walletd.processes import Workers, declare_all, start_workers

ETHEREUM_ACCOUNT = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
                    "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


class Statements:
    """Every SQL statement the engine sends, whitespace folded, cut at 160 characters, but
    those of the process's background loops (threads named ``walletd-*``: the audit log's
    sequencer, the sweepers, the seal reports), which run on their own schedule."""

    def __init__(self, services: Services) -> None:
        self.seen: list[str] = []
        self._lock = threading.Lock()
        event.listen(services.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        thread = threading.current_thread().name
        if thread.startswith("walletd-"):
            return
        with self._lock:
            self.seen.append(f"[{thread}] " + " ".join(statement.split())[:160])

    def clear(self) -> None:
        with self._lock:
            self.seen.clear()

    def __len__(self) -> int:
        return len(self.seen)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.seen))


class Client:
    """The root user's API key, stamping as ``turnkey-http`` does, from a client address."""

    def __init__(self, services: Services, root: dict[str, str]) -> None:
        self.services = services
        self.root = root

    def stamp(self, text: str) -> dict[str, str]:
        from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig

        stamp = ApiKeyStamper(ApiKeyStamperConfig(self.root["apiPublicKey"],
                                                  self.root["apiPrivateKey"])).stamp(text)
        return {stamp.stamp_header_name: stamp.stamp_header_value}

    def submit(self, path: str, type_: str, parameters: dict[str, Any],
               address: str = "127.0.0.1", **extra: Any) -> dict[str, Any]:
        text = json.dumps({"type": type_, "timestampMs": str(time.time_ns() // 1_000_000),
                           "organizationId": self.root["organizationId"],
                           "parameters": parameters, **extra})
        token = origin.bind(address)
        try:
            return submit(self.services, path, self.stamp(text), text.encode())
        finally:
            origin.unbind(token)

    def query(self, path: str, body: dict[str, Any], address: str = "127.0.0.1") -> dict[str, Any]:
        text = json.dumps({"organizationId": self.root["organizationId"], **body})
        token = origin.bind(address)
        try:
            return query(self.services, path, self.stamp(text), text.encode())
        finally:
            origin.unbind(token)

    def create_wallet(self, name: str) -> str:
        """A wallet with one Ethereum account; its address."""
        wallet = self.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                             {"walletName": name, "accounts": [ETHEREUM_ACCOUNT]})
        assert wallet["status"] == "ACTIVITY_STATUS_COMPLETED", wallet
        return str(wallet["result"]["createWalletResult"]["addresses"][0])

    def sign(self, address: str, n: int, **extra: Any) -> dict[str, Any]:
        return self.submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": address, "payload": f"{n:064x}",
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"},
            **extra)


@dataclass
class Deployment:
    services: Services
    root: dict[str, str]
    url: str
    stop: threading.Event
    pools: Workers

    def stop_pools(self) -> None:
        self.pools.stop(5_000)

    def close(self) -> None:
        self.stop.set()
        self.pools.stop(5_000)
        if self.services.listener is not None:
            self.services.stop_listening()
        self.services.engine.dispose()


def start(url: str | None, data_dir: Path,
          queue_names: Iterable[str] = (queues.CONSENSUS, queues.SIGNING, queues.ACCOUNTS),
          ) -> Deployment:
    """Migrate ``url`` (``None``: the data dir's SQLite), compose the embedded roles on it and
    start their worker threads for ``queue_names``."""
    env = {"WALLETD_DATA_DIR": str(data_dir), "WALLETD_BROKER_URL": "memory://",
           "WALLETD_SYNC_WAIT_MS": "10000", "WALLETD_WORKER_THREADS": "2"}
    if url:
        env["WALLETD_DATABASE_URL"] = url
    settings = Settings.from_env(env)
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "embedded")
    ensure_root(services.uow, services.settings)
    declare_all(services)
    stop = threading.Event()
    pools = start_workers(services, set(queue_names), None, stop, sweep=False)
    if url:
        # Steady state: the process's LISTEN connection is up (as soon after start as it
        # connects).
        assert services.listener is not None and services.listener.connected.wait(30)
    root = json.loads((data_dir / KEY_FILE).read_text())
    return Deployment(services, root, settings.effective_database_url, stop, pools)


@contextmanager
def running(url: str | None, data_dir: Path,
            queue_names: Iterable[str] = (queues.CONSENSUS, queues.SIGNING, queues.ACCOUNTS),
            ) -> Iterator[Deployment]:
    deployment = start(url, data_dir, queue_names)
    try:
        yield deployment
    finally:
        deployment.close()
