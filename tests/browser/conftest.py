"""Real headless Chromium (Debian's ``chromium``) driven by Playwright for Python.

Screenshots go to ``tests/artifacts/`` (git-ignored). Without a Chromium the tests skip
locally and fail under ``CI=true`` (``make install-test`` installs it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.auth_proxy.conftest import Proxied, start
from tests.support.oidc_provider import OidcProvider

#: The X (OAuth 2.0) client the loopback provider knows.
X_CLIENT, X_SECRET = "x-browser-client", "x-browser-secret-4kQ2"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium and Playwright are required under CI (make install-test)")
        pytest.skip("no Chromium / Playwright here (make install-test installs them)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture(scope="package")
def oidc() -> Iterator[OidcProvider]:
    provider = OidcProvider(clients={X_CLIENT: X_SECRET}).start()
    yield provider
    provider.stop()


@pytest.fixture(scope="package")
def proxied(tmp_path_factory: pytest.TempPathFactory, oidc: OidcProvider) -> Iterator[Proxied]:
    with start(tmp_path_factory.mktemp("browser"), WALLETD_OIDC_ISSUERS=oidc.issuer,
               WALLETD_OIDC_ALLOW="127.0.0.0/8",
               WALLETD_OAUTH2_X_TOKEN_URL=f"{oidc.issuer}/token",
               WALLETD_OAUTH2_X_USERINFO_URL=f"{oidc.issuer}/2/users/me") as running:
        yield running


def shot(page: Any, name: str) -> Path:
    """Keep a screenshot as a test artifact."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# -- the console on the production path ------------------------------------------------------
@pytest.fixture(scope="package")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """PostgreSQL + RabbitMQ: gunicorn ingress and separate worker processes per queue group
    (``Deployment.production``), on a fresh database and virtual host."""
    from tests.support import services
    from tests.support.deployment import Deployment

    db = services.create_database()
    vhost = services.create_vhost()
    dep = Deployment.production(tmp_path_factory.mktemp("console"), db, vhost)
    try:
        yield dep
    finally:
        dep.stop()
        services.delete_vhost(vhost)
        services.drop_database(db)


@pytest.fixture(scope="package")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the console tests keep their screenshots (the pytest tmp dir)."""
    return tmp_path_factory.mktemp("console-screenshots")


DOCS_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"


def console_shot(page: Any, shots: Path, name: str, docs: bool = False) -> Path:
    """A full-page screenshot kept as a test artifact (the pytest tmp dir, and
    ``tests/artifacts/``); with ``docs`` and ``WALLETD_DOCS_SCREENSHOTS=1`` also written to
    ``docs/console/`` (the committed copies CONSOLE.md shows)."""
    path = shots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(path, ARTIFACTS / f"console-{name}.png")
    if docs and os.environ.get("WALLETD_DOCS_SCREENSHOTS") == "1":
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS_SHOTS / f"{name}.png")
    return path
