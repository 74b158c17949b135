"""``GET /ready`` answers 503 while the database is unreachable, and 200 again after.

Production path (gunicorn over PostgreSQL): the test makes the deployment's own database
refuse connections (``ALLOW_CONNECTIONS false`` and its sessions terminated), a real outage
as the ingress sees it, then lets it back in.
"""

from __future__ import annotations

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
