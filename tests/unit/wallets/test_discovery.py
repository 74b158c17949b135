"""``GET /public/v1/discovery/keys`` before and after the service signer exists."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest

from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.errors import GRPC_UNAVAILABLE
from infra.settings import Settings
from ingress.app import create_app

PATH = "/public/v1/discovery/keys"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path)})
    upgrade(settings.effective_database_url)
    return settings


@pytest.fixture
def ingress(settings: Settings) -> Iterator[tuple[Services, falcon.testing.TestClient]]:
    services = bootstrap(settings, "ingress")
    try:
        yield services, falcon.testing.TestClient(create_app(services))
    finally:
        services.engine.dispose()


def test_without_a_signer_the_answer_is_an_uncached_503_wire_error(
    ingress: tuple[Services, falcon.testing.TestClient],
) -> None:
    _, client = ingress
    response = client.simulate_get(PATH)
    assert response.status_code == 503
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == GRPC_UNAVAILABLE
    assert "signer" in body["message"] and "retry" in body["message"]


def test_once_a_worker_created_the_signer_it_is_published_and_cacheable(
    settings: Settings, ingress: tuple[Services, falcon.testing.TestClient],
) -> None:
    _, client = ingress
    assert client.simulate_get(PATH).status_code == 503
    worker = bootstrap(settings, "worker")  # the worker hook creates the signer key
    worker.engine.dispose()
    response = client.simulate_get(PATH)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=300"
    key = response.json["signerPublicKey"]
    assert key.startswith("04") and len(key) == 130
