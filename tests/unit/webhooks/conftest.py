"""Fixtures for the webhook tests: a real receiver on 127.0.0.1, with and without TLS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.webhook_receiver import (
    WebhookReceiver,
    self_signed_certificate,
    tls_server_context,
)


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    """A plain-http receiver on 127.0.0.1."""
    with WebhookReceiver(hang_limit_s=10.0) as server:
        yield server


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate naming only ``TLS_HOSTNAME`` (not 127.0.0.1), and its key."""
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_receiver(tls_files: tuple[Path, Path]) -> Iterator[WebhookReceiver]:
    """An https receiver on 127.0.0.1 whose certificate names only ``TLS_HOSTNAME``."""
    with WebhookReceiver(tls=tls_server_context(*tls_files), hang_limit_s=10.0) as server:
        yield server
