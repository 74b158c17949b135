"""Shared fixtures: real services and running deployments.

- ``embedded``: one ``walletd up`` (SQLite, in-process broker) for the session.
- ``production``: gunicorn + separate worker processes over a fresh PostgreSQL database and
  a fresh RabbitMQ virtual host, for the session.
- ``pg_url`` / ``amqp_url`` / ``redis_url``: fresh real-service endpoints for the session
  (``pg_url`` is the production deployment's database); ``fresh_pg_url``: a database per test.
Service checks skip locally and fail under CI=true (see tests/support/services.py).
"""

from __future__ import annotations

# First: ``infra`` imports py_ecc and puts back the recursion limit py_ecc raises (see
# infra/__init__.py); a test module importing eth_account first would leave it at 100000,
# and a hostile-JSON test would then crash the whole run with SIGSEGV.
import infra  # noqa: F401  # isort: skip
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import services
from tests.support.deployment import Deployment


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    url = services.create_database()
    yield url
    services.drop_database(url)


@pytest.fixture
def fresh_pg_url() -> Iterator[str]:
    """A PostgreSQL database of this test alone. ``pg_url`` is shared with the session's
    production deployment, whose own processes (its webhook relay, its sweeper) act on
    every row they find: in-process tests that run their own workers use this one."""
    url = services.create_database()
    yield url
    services.drop_database(url)


@pytest.fixture(scope="session")
def amqp_url() -> Iterator[str]:
    url = services.create_vhost()
    yield url
    services.delete_vhost(url)


@pytest.fixture(scope="session")
def redis_url() -> str:
    return services.redis_url()


@pytest.fixture(scope="session")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    dep = Deployment.embedded(tmp_path_factory.mktemp("embedded"))
    yield dep
    dep.stop()


@pytest.fixture(scope="session")
def production(tmp_path_factory: pytest.TempPathFactory, pg_url: str,
               amqp_url: str) -> Iterator[Deployment]:
    dep = Deployment.production(tmp_path_factory.mktemp("production"), pg_url, amqp_url)
    yield dep
    dep.stop()


@pytest.fixture(params=["embedded", "production"])
def deployment(request: pytest.FixtureRequest) -> Deployment:
    """Run a test on both paths."""
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def _vectors_dir() -> Path:
    shared = Path(__file__).resolve().parents[2] / "shared" / "vectors"
    return shared if shared.is_dir() else Path(__file__).parent / "vectors"


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    return _vectors_dir()
