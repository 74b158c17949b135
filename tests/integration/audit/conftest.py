"""An embedded walletd composition on a fresh PostgreSQL database, driven in process (real
workers, in-process broker), with the audit log's checkpoints issued by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from infra.audit import checkpoints
from infra.bootstrap import Services
from infra.worker_services import log_keys
from tests.support.in_process import Client, running


class World(Client):
    def __init__(self, services: Services, root: dict[str, str], url: str) -> None:
        super().__init__(services, root)
        self.url = url
        self.stop_pools: Any = lambda: None
        from ingress.app import create_app
        self.http = falcon.testing.TestClient(create_app(services))

    def checkpoint(self) -> checkpoints.Stored:
        return checkpoints.issue(self.services, log_keys(self.services))

    def fetch(self, url: str) -> bytes:
        """The witness's HTTP GET, answered by this deployment's ingress app."""
        path, _, qs = url.partition("//")[2].partition("/")[2].partition("?")
        result = self.http.simulate_get("/" + path, query_string=qs or None)
        assert result.status_code == 200, (url, result.text)
        return result.content


@pytest.fixture
def world(fresh_pg_url: str, tmp_path: Path) -> Iterator[World]:
    with running(fresh_pg_url, tmp_path) as deployment:
        world = World(deployment.services, deployment.root, fresh_pg_url)
        world.stop_pools = deployment.stop_pools
        yield world
