"""``GET /ready`` answers 503 while the database is unreachable, and 200 again after.

Production path (gunicorn over PostgreSQL): the test makes the deployment's own database
refuse connections (``ALLOW_CONNECTIONS false`` and its sessions terminated), a real outage
as the ingress sees it, then lets it back in.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import requests

from tests.support import services
from tests.support.deployment import Deployment


@pytest.fixture
def own_database(tmp_path: Path) -> Iterator[tuple[Deployment, str]]:
    db, vhost = services.create_database(), services.create_vhost()
    dep = Deployment.production(tmp_path, db, vhost)
    yield dep, db.rsplit("/", 1)[1]
    dep.stop()
    _allow(db.rsplit("/", 1)[1], True)
    services.drop_database(db)
    services.delete_vhost(vhost)


def _allow(name: str, allowed: bool) -> None:
    with psycopg.connect(services.PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {str(allowed).lower()}')
        if not allowed:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = %s AND pid <> pg_backend_pid()", (name,))


def _ready(dep: Deployment) -> requests.Response:
    return requests.get(dep.base_url + "/ready", timeout=30)


def _until(dep: Deployment, status: int) -> requests.Response:
    deadline = time.monotonic() + 60
    response = _ready(dep)
    while response.status_code != status and time.monotonic() < deadline:
        time.sleep(0.3)
        response = _ready(dep)
    return response


def test_ready_is_503_while_the_database_is_unreachable(own_database: tuple[Deployment, str]) -> None:
    dep, name = own_database
    assert _ready(dep).status_code == 200

    _allow(name, False)
    down = _until(dep, 503)
    assert down.status_code == 503, down.text
    body = down.json()
    assert body["checks"]["database"].startswith("unreachable")
    assert body["checks"]["broker"] == "ok"
    assert body["code"] == 14 and "database" in body["message"] and body["details"] == []
    # Liveness is not readiness: the process itself is fine.
    assert requests.get(dep.base_url + "/health", timeout=10).status_code == 200

    _allow(name, True)
    up = _until(dep, 200)
    assert up.status_code == 200, up.text
    assert up.json()["checks"] == {"database": "ok", "broker": "ok"}


def _close_connections(vhost_url: str) -> None:
    """RabbitMQ closes every connection of the vhost, as it does with one whose heartbeats
    it missed (an idle ingress thread's connection): the client learns of it on next use."""
    vhost = vhost_url.rsplit("/", 1)[1]
    subprocess.run(["rabbitmqctl", "-q", "close_all_connections", "-p", vhost, "readiness test"],
                   check=True, capture_output=True, timeout=60)


def test_ready_stays_200_when_rabbitmq_drops_idle_connections(tmp_path: Path) -> None:
    db, vhost = services.create_database(), services.create_vhost()
    dep = Deployment.production(tmp_path, db, vhost)
    try:
        # Many ingress threads answer /ready once, each opening its own broker connection.
        assert all(_ready(dep).status_code == 200 for _ in range(40))
        _close_connections(vhost)
        time.sleep(1.0)  # the server has closed them; the threads' connections look idle
        answers = [_ready(dep) for _ in range(40)]
        assert [a.status_code for a in answers if a.status_code != 200] == [], \
            [a.text for a in answers if a.status_code != 200][:3]
        assert all(a.json()["checks"]["broker"] == "ok" for a in answers)
        # The broker really is checked: a vhost that is gone is not ready.
        services.delete_vhost(vhost)
        down = _until(dep, 503)
        assert down.status_code == 503 and down.json()["checks"]["broker"].startswith("unreachable")
    finally:
        dep.stop()
        services.drop_database(db)
        services.delete_vhost(vhost)
