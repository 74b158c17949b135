"""What the webhook benchmark runs against: a scratch database, an organization with the
notifier built over it, and a plain HTTP receiver on 127.0.0.1 (no test-suite imports)."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.activities import lifecycle
from infra.bootstrap import Services, bootstrap
from infra.clock import new_id
from infra.db.migrate import upgrade
from infra.db.models.activities import Activity
from infra.db.models.webhooks import WebhookEndpoint
from infra.root import create_organization, new_p256_keypair
from infra.settings import Settings
from notifier.actors import Notifier, build_notifier

#: Administrative connection used to create and drop the scratch PostgreSQL database.
PG_ADMIN_URL = os.environ.get("WALLETD_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


@contextmanager
def scratch_postgres() -> Iterator[str]:
    """A fresh PostgreSQL database for one run, dropped afterwards; yields its URL."""
    import psycopg

    name = f"walletd_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.receiver.record(body)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        return


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    receiver: Receiver


class Receiver:
    """Answers every POST with 200 and keeps the JSON bodies, in arrival order."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def start(self) -> Receiver:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.receiver = self
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def record(self, body: bytes) -> None:
        try:
            payload = json.loads(body)
        except ValueError:
            payload = {}
        with self._lock:
            self.bodies.append(payload if isinstance(payload, dict) else {})

    def since(self, seen: int) -> list[dict[str, Any]]:
        """Bodies that arrived after the first ``seen``."""
        with self._lock:
            return self.bodies[seen:]


@dataclass
class Organization:
    """Services over a migrated database, one organization, and the notifier."""

    services: Services
    notifier: Notifier
    organization_id: str

    def add_endpoint(self, url: str) -> str:
        endpoint_id = new_id()
        with self.services.uow() as uow:
            uow.session.add(
                WebhookEndpoint(
                    id=endpoint_id,
                    organization_id=self.organization_id,
                    url=url,
                    name="bench",
                    is_active=True,
                    subscriptions=[{"eventType": "ACTIVITY_UPDATES", "isActive": True}],
                )
            )
            uow.commit()
        return endpoint_id

    def submit(self) -> str:
        """Insert a PENDING activity as ingress does (lifecycle listeners included)."""
        activity_id = new_id()
        body = f'{{"n":"{activity_id}"}}'
        with self.services.uow() as uow:
            activity = Activity(
                id=activity_id,
                organization_id=self.organization_id,
                type="ACTIVITY_TYPE_UPDATE_USER_NAME",
                status=lifecycle.PENDING,
                fingerprint="sha256:" + hashlib.sha256(body.encode()).hexdigest(),
                body=body,
                timestamp_ms="1",
                intent={"updateUserNameIntent": {"userId": "u", "userName": "n"}},
                result={},
            )
            uow.session.add(activity)
            lifecycle.record_created(uow.session, activity)
            uow.commit()
        return activity_id

    def complete(self, activity_id: str) -> None:
        """Claim and complete it as an executor does."""
        with self.services.uow() as uow:
            activity = lifecycle.claim(uow.session, activity_id, lifecycle.PENDING)
            assert activity is not None
            result: dict[str, Any] = {"updateUserNameResult": {}}
            lifecycle.transition(uow.session, activity, lifecycle.COMPLETED, result=result)
            uow.commit()


def build_organization(folder: Path, *, database_url: str = "") -> Organization:
    """Migrate a database (SQLite under ``folder`` unless ``database_url``) and set it up."""
    settings = Settings(
        data_dir=folder / "data",
        database_url=database_url,
        broker_url="memory://",
        webhook_allow=("127.0.0.1",),
        master_key_file=str(folder / "data" / "master-keys.json"),
    )
    settings.data_dir.mkdir(parents=True)
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "worker")
    with services.uow() as uow:
        org, _ = create_organization(uow.session, "bench", new_p256_keypair()[1])
        uow.commit()
        organization_id = org.id
    return Organization(services, build_notifier(services), organization_id)
