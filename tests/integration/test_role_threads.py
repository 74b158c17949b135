"""Every thread of a process is started by its role's entry point and named in one list.

After each role starts (the ingress as gunicorn's ``load`` builds it, a worker as
``walletd worker`` does, ``walletd up``), the threads it added are exactly those
``walletd.processes`` names for it (the composition root's, the pools', the loops', the HTTP
servers'), counted by name; after it served requests that use every loop (signatures, a
webhook endpoint, an emailed code, the audit log), no thread has appeared. Real PostgreSQL and
RabbitMQ for the production roles, SQLite and the in-process broker for ``walletd up``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
import requests

from infra.bootstrap import bootstrap
from infra.db.migrate import upgrade
from infra.identity.root import KEY_FILE, ensure_root
from infra.messaging import queues
from infra.settings import Settings
from ingress.app import create_app
from tests.support import services as real
from tests.support.eventually import until_passes
from tests.support.ports import free_port
from walletd.cli import private_data_dir, start_up
from walletd.processes import start_worker, thread_names

ACCOUNT = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
           "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


def _live() -> Counter[str]:
    return Counter(t.name for t in threading.enumerate() if t.is_alive())


def _added(before: Counter[str]) -> Counter[str]:
    return _live() - before


def _runs_exactly(before: Counter[str], expected: Counter[str]) -> None:
    """The threads added since ``before`` are ``expected``, once transient ones ended (pika
    resolves a broker's address on a short-lived ``threading.Timer`` while it connects);
    a thread that stays is still a failure, after a bounded wait."""
    def check() -> None:
        assert _added(before) == expected
    until_passes(check, timeout_s=5)


def _stamp(root: dict[str, str], text: str) -> dict[str, str]:
    from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig

    stamp = ApiKeyStamper(ApiKeyStamperConfig(root["apiPublicKey"], root["apiPrivateKey"]))
    made = stamp.stamp(text)
    return {made.stamp_header_name: made.stamp_header_value}


Post = Callable[[str, str, dict[str, str]], dict[str, Any]]


def _use_every_loop(post: Post, root: dict[str, str]) -> None:
    """Requests whose work runs on every pool and wakes every loop: a wallet and signatures
    (signing, accounts, consensus: sweeper and audit log), a webhook endpoint (the relay and
    the notifier), an emailed code (the email event log), the audit checkpoint."""
    org = root["organizationId"]

    def submit(path: str, type_: str, parameters: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps({"type": type_, "timestampMs": str(time.time_ns() // 1_000_000),
                           "organizationId": org, "parameters": parameters})
        return post(f"/public/v1/submit/{path}", text, _stamp(root, text))

    def read(path: str, body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps({"organizationId": org, **body})
        return post(f"/public/v1/query/{path}", text, _stamp(root, text))

    wallet = submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                    {"walletName": f"w-{uuid.uuid4().hex[:8]}", "accounts": [ACCOUNT]})
    assert wallet["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED", wallet
    address = wallet["activity"]["result"]["createWalletResult"]["addresses"][0]
    for n in range(3):
        signed = submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": address, "payload": f"{n:064x}",
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"})
        assert signed["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED", signed
    endpoint = submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", {
        "url": "https://receiver.example/hook", "name": "hook",
        "subscriptions": [{"eventType": "ACTIVITY_UPDATES"}]})
    assert "activity" in endpoint, endpoint
    email = f"threads-{uuid.uuid4().hex[:8]}@example.com"
    otp = submit("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3",
                 {"otpType": "OTP_TYPE_EMAIL", "contact": email, "appName": "App"})
    assert otp["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED", otp
    deadline = time.monotonic() + 30
    while not read("list_email_events", {"email": email}).get("emailEvents"):
        assert time.monotonic() < deadline, "the email event log was never written"
        time.sleep(0.2)


# -- production roles: PostgreSQL and RabbitMQ --------------------------------------------------

@pytest.fixture
def production_settings(tmp_path: Path) -> Iterator[Settings]:
    database, vhost = real.create_database(), real.create_vhost()
    settings = Settings.from_env({
        "WALLETD_DATA_DIR": str(tmp_path / "data"), "WALLETD_DATABASE_URL": database,
        "WALLETD_BROKER_URL": vhost, "WALLETD_SEAL": "static",
        "WALLETD_SEAL_ALLOW_STATIC": "true", "WALLETD_WORKER_THREADS": "2",
        "WALLETD_SWEEP_INTERVAL_S": "1", "WALLETD_SYNC_WAIT_MS": "10000"})
    upgrade(settings.effective_database_url)
    yield settings
    real.delete_vhost(vhost)
    real.drop_database(database)


def test_the_production_roles_run_exactly_their_listed_threads(
        production_settings: Settings) -> None:
    before = _live()
    ingress = bootstrap(production_settings, "ingress")  # gunicorn's load(), per worker
    client = falcon.testing.TestClient(create_app(ingress))
    expected = thread_names(ingress)
    assert expected == Counter({"walletd-listener": 1})
    _runs_exactly(before, expected)

    worker = start_worker(production_settings, set(queues.ALL), None)  # `walletd worker`
    try:
        expected += worker.thread_names()
        assert {"walletd-sweeper", "walletd-audit-log", "walletd-webhook-relay",
                "walletd-broadcast", "walletd-seal-report", "walletd-email-events",
                "dramatiq-worker-signing", "dramatiq-time-limit"} <= set(expected)
        _runs_exactly(before, expected)
        assert ensure_root(worker.services.uow, worker.services.settings)
        root = json.loads((production_settings.data_dir / KEY_FILE).read_text())

        def post(path: str, text: str, headers: dict[str, str]) -> dict[str, Any]:
            answer = client.simulate_post(path, body=text, headers=headers)
            assert answer.status_code == 200, answer.text
            return dict(answer.json)

        _use_every_loop(post, root)
        _runs_exactly(before, expected)  # nothing started a thread on first use
    finally:
        worker.close()
        for services in (ingress, worker.services):
            services.stop_listening()
            services.engine.dispose()


# -- walletd up: SQLite and the in-process broker -----------------------------------------------

def test_walletd_up_runs_exactly_its_listed_threads(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings.from_env({
        "WALLETD_DATA_DIR": str(tmp_path / "data"), "WALLETD_PORT": str(port),
        "WALLETD_AUTH_PROXY_PORT": str(free_port()), "WALLETD_HTTP_THREADS": "4",
        "WALLETD_WORKER_THREADS": "2", "WALLETD_SWEEP_INTERVAL_S": "1",
        "WALLETD_SYNC_WAIT_MS": "10000"})
    private_data_dir(settings.data_dir)  # as `walletd up` does before it starts
    before = _live()
    up = start_up(settings)
    try:
        expected = up.thread_names()
        assert {"walletd-http", "waitress-0", "walletd-sweeper", "walletd-email-events",
                "walletd-seal-admin"} <= set(expected)
        assert "walletd-listener" not in expected  # SQLite: counted changes, no LISTEN
        _runs_exactly(before, expected)
        root = json.loads((settings.data_dir / KEY_FILE).read_text())
        session = requests.Session()

        def post(path: str, text: str, headers: dict[str, str]) -> dict[str, Any]:
            answer = session.post(f"http://127.0.0.1:{port}{path}", data=text, headers=headers,
                                  timeout=30)
            assert answer.status_code == 200, answer.text
            return dict(answer.json())

        _use_every_loop(post, root)
        _runs_exactly(before, expected)  # nothing started a thread on first use
    finally:
        up.close()
        up.services.engine.dispose()
