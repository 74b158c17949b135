"""``/metrics`` on the API port is not public: loopback peers only, or a bearer token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest

from infra.bootstrap import bootstrap
from infra.db.migrate import upgrade
from infra.settings import Settings
from ingress.app import create_app


@pytest.fixture
def client_with(tmp_path: Path) -> Iterator[object]:
    built = []

    def make(**env: str) -> falcon.testing.TestClient:
        settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path), **env})
        upgrade(settings.effective_database_url)
        services = bootstrap(settings, "ingress")
        built.append(services)
        return falcon.testing.TestClient(create_app(services))

    yield make
    for services in built:
        services.engine.dispose()


def test_without_a_token_only_loopback_peers_scrape(client_with: object) -> None:
    client = client_with()  # type: ignore[operator]
    assert client.simulate_get("/metrics", remote_addr="203.0.113.9").status_code == 404
    assert client.simulate_get("/metrics", remote_addr="127.0.0.1").status_code == 200
    assert client.simulate_get("/metrics", remote_addr="::1").status_code == 200


def test_with_a_token_every_peer_needs_it(client_with: object) -> None:
    client = client_with(WALLETD_METRICS_TOKEN="s3cret")  # type: ignore[operator]
    for peer in ("203.0.113.9", "127.0.0.1"):
        refused = client.simulate_get("/metrics", remote_addr=peer)
        assert refused.status_code == 401
        assert set(refused.json) == {"code", "message", "details"}
    scraped = client.simulate_get("/metrics", remote_addr="203.0.113.9",
                                  headers={"Authorization": "Bearer s3cret"})
    assert scraped.status_code == 200 and "walletd_" in scraped.text


FORWARDED = [{"X-Forwarded-For": "203.0.113.9"}, {"Forwarded": "for=203.0.113.9"},
             {"X-Real-IP": "203.0.113.9"}, {"X-Forwarded-For": ""}]


@pytest.mark.parametrize("headers", FORWARDED)
def test_a_forwarded_request_from_loopback_counts_as_remote(client_with: object,
                                                           headers: dict[str, str]) -> None:
    """A same-host proxy or sidecar: every peer is loopback, and the header it adds is what
    says the client is elsewhere. The attacker reaches /metrics through it."""
    client = client_with()  # type: ignore[operator]
    refused = client.simulate_get("/metrics", remote_addr="127.0.0.1", headers=headers)
    assert refused.status_code == 403
    assert set(refused.json) == {"code", "message", "details"}
    assert "forwarded request" in refused.json["message"] and "walletd_" not in refused.text
    # The local scraper beside it still reads the page.
    assert client.simulate_get("/metrics", remote_addr="127.0.0.1").status_code == 200


@pytest.mark.parametrize("headers", FORWARDED)
def test_a_forwarded_request_with_the_token_is_served(client_with: object,
                                                      headers: dict[str, str]) -> None:
    client = client_with(WALLETD_METRICS_TOKEN="s3cret")  # type: ignore[operator]
    refused = client.simulate_get("/metrics", remote_addr="127.0.0.1", headers=headers)
    assert refused.status_code == 401
    scraped = client.simulate_get("/metrics", remote_addr="127.0.0.1",
                                  headers={**headers, "Authorization": "Bearer s3cret"})
    assert scraped.status_code == 200 and "walletd_" in scraped.text
