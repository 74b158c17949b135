"""Request-rate limits in the ingress: 429 with the wire body and Retry-After, per client
address, per organization and per sub-organization, on both limiter backends, and shared
by two ingress apps over one Redis (as gunicorn workers or ingress hosts share it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import falcon.testing
import pytest

from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.errors import GRPC_RESOURCE_EXHAUSTED
from infra.identity.root import create_organization, new_p256_keypair
from infra.settings import Settings
from ingress.app import create_app
from tests.support.keys import TestKey as StampKey
from tests.support.keys import load_p256_key

# 3 requests per 60 s window (one request's share is 20 s: no test runs that slowly).
SLOW = "0.05"
WINDOW = "60"
OPENAPI = "/public/v1/openapi.json"

App = Callable[..., falcon.testing.TestClient]


@pytest.fixture(params=["memory", "redis"])
def limiter_url(request: pytest.FixtureRequest) -> str:
    if request.param == "memory":
        return "memory://"
    url: str = request.getfixturevalue("redis_url")
    import redis

    redis.Redis.from_url(url).flushdb()  # a logical database of this test run
    return url


@pytest.fixture
def database(tmp_path: Path) -> tuple[Path, str, str, StampKey, StampKey]:
    """A migrated SQLite database with an organization and one sub-organization, and their
    root users' keys."""
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path)})
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "cli")
    parent_key, child_key = (load_p256_key(new_p256_keypair()[0]) for _ in range(2))
    try:
        with services.session_factory() as session:
            parent, _ = create_organization(session, "parent", parent_key.public_key)
            child, _ = create_organization(session, "child", child_key.public_key,
                                           parent_id=parent.id)
            session.commit()
            return tmp_path, parent.id, child.id, parent_key, child_key
    finally:
        services.engine.dispose()


@pytest.fixture
def app(database: tuple[Path, str, str, StampKey, StampKey], limiter_url: str) -> Iterator[App]:
    built: list[Services] = []

    def make(**limits: str) -> falcon.testing.TestClient:
        """An ingress app with ``WALLETD_RATE_LIMIT_<NAME>=value`` for each keyword."""
        env = {"WALLETD_DATA_DIR": str(database[0]), "WALLETD_RATE_LIMIT_URL": limiter_url,
               "WALLETD_RATE_LIMIT_BURST_S": WINDOW,
               **{f"WALLETD_RATE_LIMIT_{k.upper()}": v for k, v in limits.items()}}
        services = bootstrap(Settings.from_env(env), "ingress")
        built.append(services)
        return falcon.testing.TestClient(create_app(services))

    yield make
    for services in built:
        services.engine.dispose()


def _whoami(client: falcon.testing.TestClient, organization_id: str,
            address: str = "10.0.0.1", key: StampKey | None = None) -> falcon.testing.Result:
    """whoami, stamped with ``key`` (unauthenticated without one)."""
    body = json.dumps({"organizationId": organization_id}).encode()
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["X-Stamp"] = key.stamp(body)
    return client.simulate_post("/public/v1/query/whoami", body=body, remote_addr=address,
                                headers=headers)


def _assert_throttled(result: falcon.testing.Result, scope: str) -> None:
    assert result.status_code == 429, result.text
    body = result.json
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == GRPC_RESOURCE_EXHAUSTED
    assert body["message"].startswith("Too many requests") and scope in body["message"]
    assert {"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
            "turnkeyErrorCode": "RATE_LIMIT_EXCEEDED"} in body["details"]
    assert 1 <= int(result.headers["Retry-After"]) <= 20
    assert result.headers["ratelimit-remaining"] == "0"


def test_over_the_address_limit_is_429(app: App) -> None:
    client = app(address_rps=SLOW)
    answered = [client.simulate_get(OPENAPI, remote_addr="10.0.0.7") for _ in range(3)]
    assert [r.status_code for r in answered] == [200, 200, 200]
    assert [r.headers["ratelimit-remaining"] for r in answered] == ["2", "1", "0"]
    assert all(r.headers["ratelimit-limit"] == "3" for r in answered)
    _assert_throttled(client.simulate_get(OPENAPI, remote_addr="10.0.0.7"), "client address")
    # Another address has its own budget; probes are never limited.
    assert client.simulate_get(OPENAPI, remote_addr="10.0.0.8").status_code == 200
    assert client.simulate_get("/health", remote_addr="10.0.0.7").status_code == 200


def test_organization_limit_spans_addresses_and_sub_organizations(
        app: App, database: tuple[Path, str, str, StampKey, StampKey]) -> None:
    _, parent, child, _, _ = database
    client = app(organization_rps=SLOW)
    # Unauthenticated requests naming the organization spend nothing of its budget.
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"):
        assert _whoami(client, child, address).status_code == 401
    # Authenticated ones do, from any address, in the organization or its sub-organization.
    assert _whoami(client, parent, "10.0.0.1", database[3]).status_code == 200
    assert _whoami(client, child, "10.0.0.2", database[4]).status_code == 200
    assert _whoami(client, parent, "10.0.0.3", database[3]).status_code == 200
    _assert_throttled(_whoami(client, child, "10.0.0.4", database[4]), "organization")
    # An organization that does not exist is not counted (its request is a 404).
    assert _whoami(client, "00000000-0000-0000-0000-000000000000").status_code == 404


def test_sub_organization_limit_is_its_own(
        app: App, database: tuple[Path, str, str, StampKey, StampKey]) -> None:
    _, parent, child, _, _ = database
    client = app(sub_organization_rps=SLOW)
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"):
        assert _whoami(client, child, address).status_code == 401
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        assert _whoami(client, child, address, database[4]).status_code == 200
    _assert_throttled(_whoami(client, child, "10.0.0.5", database[4]), "sub-organization")
    # Spent, its budget refuses unauthenticated requests too (before any work).
    _assert_throttled(_whoami(client, child, "10.0.0.6"), "sub-organization")
    assert _whoami(client, parent, "10.0.0.7", database[3]).status_code == 200


def test_forwarded_address_from_trusted_hops(app: App) -> None:
    proxied = app(address_rps=SLOW, forwarded_hops="1")
    for client_address in ("203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"):
        # Behind one trusted proxy each client has its own budget (the proxy's is not used).
        result = proxied.simulate_get(OPENAPI, remote_addr="10.0.0.1",
                                      headers={"X-Forwarded-For": f"198.51.100.7, {client_address}"})
        assert result.status_code == 200
    for _ in range(3):
        proxied.simulate_get(OPENAPI, remote_addr="10.0.0.1",
                             headers={"X-Forwarded-For": "203.0.113.9"})
    # A forged left-most entry does not buy a fresh budget: only the trusted hop's entry counts.
    forged = proxied.simulate_get(OPENAPI, remote_addr="10.0.0.1",
                                  headers={"X-Forwarded-For": "1.2.3.4, 203.0.113.9"})
    _assert_throttled(forged, "client address")


def test_limits_are_shared_by_two_ingress_apps_over_redis(
        database: tuple[Path, str, str, StampKey, StampKey], redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    env = {"WALLETD_DATA_DIR": str(database[0]), "WALLETD_RATE_LIMIT_URL": redis_url,
           "WALLETD_RATE_LIMIT_BURST_S": WINDOW, "WALLETD_RATE_LIMIT_ADDRESS_RPS": SLOW}
    services = [bootstrap(Settings.from_env(env), "ingress") for _ in range(2)]
    try:
        first, second = (falcon.testing.TestClient(create_app(s)) for s in services)
        codes = [c.simulate_get(OPENAPI, remote_addr="10.9.9.9").status_code
                 for c in (first, second, first)]
        assert codes == [200, 200, 200]
        _assert_throttled(second.simulate_get(OPENAPI, remote_addr="10.9.9.9"), "client address")
    finally:
        for s in services:
            s.engine.dispose()


def test_defaults_are_generous_and_on() -> None:
    s = Settings.from_env({})
    assert s.rate_limit_address_rps >= 1000 and s.rate_limit_burst_s >= 1
    assert s.rate_limit_organization_rps > s.rate_limit_address_rps
    # No single address can use up a sub-organization's budget either.
    assert s.rate_limit_sub_organization_rps > s.rate_limit_address_rps
