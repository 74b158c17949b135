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
from typing import Any

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


# -- running in parallel (pytest-xdist: ``make test`` runs ``-n 2``) ---------------------------
#: Packages whose package-scoped fixtures (a deployment, a browser's deployment) are costly to
#: start: all their tests go to one worker, so each fixture starts once.
_WHOLE_PACKAGES = ("tests/browser/", "tests/e2e/abuse/", "tests/e2e/auth_proxy/")
#: Longest first (the scheduler hands groups out in collection order): end-to-end and browser
#: groups, then integration, then the short unit tests that fill the gaps.
_ORDER = ("tests/browser/", "tests/e2e/", "tests/fuzz/", "tests/integration/", "tests/unit/")


def _group(nodeid: str) -> str:
    """The unit of work one xdist worker takes: the test's module, or its whole package."""
    path = nodeid.split("::", 1)[0]
    return next((package for package in _WHOLE_PACKAGES if path.startswith(package)), path)


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(_ORDER) if nodeid.startswith(prefix)), len(_ORDER))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest groups first (a stable sort: the order within a module is kept), and every
    test with a node id of its own."""
    items.sort(key=lambda item: _rank(item.nodeid))
    # schemathesis's ``schema.parametrize()`` (tests/fuzz) gives all its operations' items the
    # function's node id under pytest 9, and xdist schedules by node id: 128 operations would
    # run as one. Their names differ; the id is rebuilt from the name.
    seen: set[str] = set()
    for item in items:
        if item.nodeid in seen and item.parent is not None:
            item._id = item.parent.id.child(item.name)
        seen.add(item.nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Work handed out by :func:`_group`, in collection order (longest first, above).

    xdist's ``loadgroup`` would do this with markers, but on pytest 9 its group suffix on the
    node id is lost (it sets ``_nodeid``; pytest 9 reads ``_id``) and every test goes alone.
    """
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep the order above, not by size

        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return ByGroup(config, log)
