"""Fixtures: an in-process webhook world and a real receiver on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.webhook_receiver import WebhookReceiver
from tests.support.webhook_world import World, build_world


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    built = build_world(tmp_path)
    yield built
    built.services.engine.dispose()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver(hang_limit_s=10.0) as server:
        yield server
