"""How many SQL statements one signature costs end to end, on real PostgreSQL.

The ingress's accept, the signing pool's claim, decision, signature and settle, and the
ingress's answer all run here in one process over one engine (the embedded composition on
PostgreSQL, in-process broker, real dramatiq worker threads), so a SQLAlchemy
``before_cursor_execute`` listener sees every statement of the signature, whichever role
sent it. A regression past the budget fails CI; the failure lists the statements.
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

from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.identity.root import KEY_FILE, ensure_root
from infra.messaging import queues
from infra.pipeline.submit import submit
from infra.settings import Settings
from walletd.processes import declare_all, start_workers

#: Statements per ``sign_raw_payload``, accept to answer (issue 11's budget), plus the one
#: audit-log leaf each of its two transactions stages (issue 22: ``infra.audit.leaves``).
BUDGET = 8 + 2


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

    def submit(self, path: str, type_: str, parameters: dict[str, Any]) -> dict[str, Any]:
        from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig

        text = json.dumps({"type": type_, "timestampMs": str(time.time_ns() // 1_000_000),
                           "organizationId": self.root["organizationId"],
                           "parameters": parameters})
        stamp = ApiKeyStamper(ApiKeyStamperConfig(self.root["apiPublicKey"],
                                                  self.root["apiPrivateKey"])).stamp(text)
        return submit(self.services, path, {stamp.stamp_header_name: stamp.stamp_header_value},
                      text.encode())

    def sign(self, address: str, n: int) -> dict[str, Any]:
        return self.submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": address, "payload": f"{n:064x}",
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"})


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
    # Steady state: the process's LISTEN connection is up (as soon after start as it connects).
    assert services.listener is not None and services.listener.connected.wait(30)
    yield World(services, json.loads((tmp_path / KEY_FILE).read_text()))
    stop.set()
    pools.stop(5_000)
    services.stop_listening()
    services.engine.dispose()


def test_a_signature_costs_at_most_the_statement_budget(world: World) -> None:
    wallet = world.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
        "walletName": "budget", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
    assert wallet["status"] == "ACTIVITY_STATUS_COMPLETED", wallet
    address = wallet["result"]["createWalletResult"]["addresses"][0]
    # The first signature warms what a process remembers (organization chain, user views).
    assert world.sign(address, 0)["status"] == "ACTIVITY_STATUS_COMPLETED"
    counts = []
    for n in range(1, 4):
        world.statements.clear()
        answer = world.sign(address, n)
        assert answer["status"] == "ACTIVITY_STATUS_COMPLETED", answer
        assert answer["result"]["signRawPayloadResult"]["r"]
        counts.append((len(world.statements), list(world.statements)))
    worst, statements = max(counts, key=lambda c: c[0])
    print(f"statements per signature: {[c[0] for c in counts]} (budget {BUDGET})")
    assert worst <= BUDGET, "\n".join([f"{worst} statements (budget {BUDGET}):", *statements])
