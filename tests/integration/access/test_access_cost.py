"""What the access controls cost a signature on real PostgreSQL: nothing once remembered.

The same composition as ``tests/integration/pipeline/test_statement_budget.py`` (one process,
one engine, every statement seen), but each request carries a client address, as the
ingress binds it, so the allow-list and MFA checks run. An organization without a list and
one whose list allows the address both stay within the signature's statement budget: the
lists and MFA policies are remembered per process while ``walletd_access_changed``
notifications arrive, and a change is seen by the next request.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from infra.access import origin
from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.errors import PermissionDenied
from infra.identity.root import KEY_FILE, ensure_root
from infra.messaging import queues
from infra.pipeline.submit import submit
from infra.queries_service import query
from infra.settings import Settings
from tests.integration.pipeline.test_statement_budget import BUDGET
from walletd.processes import declare_all, start_workers

# BUDGET: the signature's own statement budget (audit log included); access adds none to it.
ACCOUNTS = [{"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
             "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]


class World:
    def __init__(self, services: Services, root: dict[str, str]) -> None:
        self.services = services
        self.root = root
        self.statements: list[str] = []
        self._lock = threading.Lock()
        event.listen(services.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        with self._lock:
            self.statements.append(" ".join(statement.split())[:160])

    def _stamp(self, text: str) -> dict[str, str]:
        from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig

        stamp = ApiKeyStamper(ApiKeyStamperConfig(self.root["apiPublicKey"],
                                                  self.root["apiPrivateKey"])).stamp(text)
        return {stamp.stamp_header_name: stamp.stamp_header_value}

    def submit(self, path: str, type_: str, parameters: dict[str, Any],
               address: str = "127.0.0.1") -> dict[str, Any]:
        text = json.dumps({"type": type_, "timestampMs": str(time.time_ns() // 1_000_000),
                           "organizationId": self.root["organizationId"],
                           "parameters": parameters})
        token = origin.bind(address)
        try:
            return submit(self.services, path, self._stamp(text), text.encode())
        finally:
            origin.unbind(token)

    def whoami(self, address: str) -> dict[str, Any]:
        text = json.dumps({"organizationId": self.root["organizationId"]})
        token = origin.bind(address)
        try:
            return query(self.services, "whoami", self._stamp(text), text.encode())
        finally:
            origin.unbind(token)

    def sign(self, address: str, n: int) -> dict[str, Any]:
        return self.submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": address, "payload": f"{n:064x}",
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"})

    def worst(self, address: str, first: int) -> tuple[int, list[str]]:
        counts = []
        for n in range(first, first + 3):
            self.statements.clear()
            answer = self.sign(address, n)
            assert answer["status"] == "ACTIVITY_STATUS_COMPLETED", answer
            counts.append((len(self.statements), list(self.statements)))
        return max(counts, key=lambda c: c[0])


@pytest.fixture
def world(fresh_pg_url: str, tmp_path: Path) -> Iterator[World]:
    settings = Settings.from_env({
        "WALLETD_DATA_DIR": str(tmp_path), "WALLETD_DATABASE_URL": fresh_pg_url,
        "WALLETD_BROKER_URL": "memory://", "WALLETD_SYNC_WAIT_MS": "10000",
        "WALLETD_WORKER_THREADS": "2"})
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "embedded")
    ensure_root(services.uow, services.settings)
    declare_all(services)
    stop = threading.Event()
    pools = start_workers(services, {queues.CONSENSUS, queues.SIGNING, queues.ACCOUNTS}, None,
                          stop, sweep=False)
    assert services.listener is not None and services.listener.connected.wait(30)
    yield World(services, json.loads((tmp_path / KEY_FILE).read_text()))
    stop.set()
    pools.stop(5_000)
    services.stop_listening()
    services.engine.dispose()


def _settled(world: World, check: Any) -> None:
    """Wait (bounded) for the change notification to reach this process's caches."""
    deadline = time.monotonic() + 10
    while True:
        try:
            check()
            return
        except (AssertionError, PermissionDenied):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_allow_lists_and_mfa_cost_a_signature_nothing_once_remembered(world: World) -> None:
    wallet = world.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                          {"walletName": "budget", "accounts": ACCOUNTS})
    address = wallet["result"]["createWalletResult"]["addresses"][0]
    assert world.sign(address, 0)["status"] == "ACTIVITY_STATUS_COMPLETED"  # warms the caches
    worst, statements = world.worst(address, 1)
    assert worst <= BUDGET, "\n".join([f"{worst} statements without a list:", *statements])

    allowed = world.submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", {
        "enabled": True, "rules": [{"cidr": "127.0.0.0/24"}]})
    assert allowed["status"] == "ACTIVITY_STATUS_COMPLETED", allowed

    def refuses_outsiders() -> None:
        with pytest.raises(PermissionDenied):
            world.whoami("10.1.2.3")

    _settled(world, refuses_outsiders)  # the notification reached this process's cache
    assert world.whoami("127.0.0.9")["userId"]
    assert world.sign(address, 10)["status"] == "ACTIVITY_STATUS_COMPLETED"
    worst, statements = world.worst(address, 11)
    assert worst <= BUDGET, "\n".join([f"{worst} statements with a list:", *statements])
