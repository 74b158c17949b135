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
