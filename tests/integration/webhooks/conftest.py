"""Fixtures: an in-process webhook world and a real receiver on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.webhook_receiver import WebhookReceiver
from tests.support.webhook_world import World, running_world


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with running_world(tmp_path) as built:
        yield built


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver(hang_limit_s=10.0) as server:
        yield server
