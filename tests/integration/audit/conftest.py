"""An embedded walletd composition on a fresh PostgreSQL database, driven in process (real
workers, in-process broker), with the audit log's checkpoints issued by the tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from infra.audit import checkpoints
from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.identity.root import KEY_FILE, ensure_root
from infra.messaging import queues
from infra.pipeline.submit import submit
from infra.queries_service import query
from infra.settings import Settings
from infra.worker_services import log_keys
from walletd.processes import declare_all, start_workers


class World:
    def __init__(self, services: Services, root: dict[str, str], url: str) -> None:
        self.services = services
        self.root = root
        self.url = url
        self.stop_pools: Any = lambda: None
        from ingress.app import create_app
        self.http = falcon.testing.TestClient(create_app(services))

    def _stamp(self, text: str) -> dict[str, str]:
        from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig

        stamp = ApiKeyStamper(ApiKeyStamperConfig(self.root["apiPublicKey"],
                                                  self.root["apiPrivateKey"])).stamp(text)
        return {stamp.stamp_header_name: stamp.stamp_header_value}

    def submit(self, path: str, type_: str, parameters: dict[str, Any],
               **extra: Any) -> dict[str, Any]:
        text = json.dumps({"type": type_, "timestampMs": str(time.time_ns() // 1_000_000),
                           "organizationId": self.root["organizationId"],
                           "parameters": parameters, **extra})
        return submit(self.services, path, self._stamp(text), text.encode())

    def query(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps({"organizationId": self.root["organizationId"], **body})
        return query(self.services, path, self._stamp(text), text.encode())

    def create_wallet(self, name: str) -> str:
        wallet = self.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
            "walletName": name, "accounts": [{
                "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
                "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
        assert wallet["status"] == "ACTIVITY_STATUS_COMPLETED", wallet
        return str(wallet["result"]["createWalletResult"]["addresses"][0])

    def sign(self, address: str, n: int, **extra: Any) -> dict[str, Any]:
        return self.submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": address, "payload": f"{n:064x}",
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"},
            **extra)

    def checkpoint(self) -> checkpoints.Stored:
        return checkpoints.issue(self.services, log_keys(self.services))

    def fetch(self, url: str) -> bytes:
        """The witness's HTTP GET, answered by this deployment's ingress app."""
        path, _, qs = url.partition("//")[2].partition("/")[2].partition("?")
        result = self.http.simulate_get("/" + path, query_string=qs or None)
        assert result.status_code == 200, (url, result.text)
        return result.content


def start_world(url: str, data_dir: Path) -> tuple[World, threading.Event, Any]:
    settings = Settings.from_env({
        "WALLETD_DATA_DIR": str(data_dir), "WALLETD_DATABASE_URL": url,
        "WALLETD_BROKER_URL": "memory://", "WALLETD_SYNC_WAIT_MS": "10000",
        "WALLETD_WORKER_THREADS": "2"})
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "embedded")
    ensure_root(services.uow, services.settings)
    declare_all(services)
    stop = threading.Event()
    pools = start_workers(services, {queues.CONSENSUS, queues.SIGNING, queues.ACCOUNTS}, None,
                          stop, sweep=False)
    return World(services, json.loads((data_dir / KEY_FILE).read_text()), url), stop, pools


@pytest.fixture
def world(fresh_pg_url: str, tmp_path: Path) -> Iterator[World]:
    world, stop, pools = start_world(fresh_pg_url, tmp_path)
    world.stop_pools = lambda: pools.stop(5_000)
    yield world
    stop.set()
    pools.stop(5_000)
    world.services.stop_listening()
    world.services.engine.dispose()
