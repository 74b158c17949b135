"""What the access controls cost a signature on real PostgreSQL: nothing once remembered.

The same composition as ``tests/integration/pipeline/test_statement_budget.py`` (one process,
one engine, every statement seen), but each request carries a client address, as the
ingress binds it, so the allow-list and MFA checks run. An organization without a list and
one whose list allows the address both stay within the signature's statement budget: the
lists and MFA policies are remembered per process while the database announces changes to
their tables (``walletd_rows_changed``, migration ``0032_access_announced``), and a change
is seen by the next request.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.bootstrap import Services
from infra.errors import PermissionDenied
from tests.integration.pipeline.test_statement_budget import BUDGET
from tests.support.eventually import until_passes
from tests.support.in_process import Client, Statements, running

# BUDGET: the signature's own statement budget (audit log included); access adds none to it.


class World(Client):
    def __init__(self, services: Services, root: dict[str, str]) -> None:
        super().__init__(services, root)
        self.statements = Statements(services)

    def whoami(self, address: str) -> dict[str, Any]:
        return self.query("whoami", {}, address)

    def worst(self, address: str, first: int) -> tuple[int, list[str]]:
        counts = []
        for n in range(first, first + 3):
            self.statements.clear()
            answer = self.sign(address, n)
            assert answer["status"] == "ACTIVITY_STATUS_COMPLETED", answer
            counts.append((len(self.statements), list(self.statements)))
        return max(counts, key=lambda c: c[0])


@pytest.fixture
def world(fresh_pg_url: str, tmp_path: Path) -> Iterator[World]:
    with running(fresh_pg_url, tmp_path) as deployment:
        yield World(deployment.services, deployment.root)


def _settled(world: World, check: Any) -> None:
    """Wait (bounded) for the change notification to reach this process's caches."""
    until_passes(check, timeout_s=10, retry_on=(AssertionError, PermissionDenied))


def test_allow_lists_and_mfa_cost_a_signature_nothing_once_remembered(world: World) -> None:
    address = world.create_wallet("budget")
    assert world.sign(address, 0)["status"] == "ACTIVITY_STATUS_COMPLETED"  # warms the caches
    worst, statements = world.worst(address, 1)
    assert worst <= BUDGET, "\n".join([f"{worst} statements without a list:", *statements])

    allowed = world.submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", {
        "enabled": True, "rules": [{"cidr": "127.0.0.0/24"}]})
    assert allowed["status"] == "ACTIVITY_STATUS_COMPLETED", allowed

    def refuses_outsiders() -> None:
        with pytest.raises(PermissionDenied):
            world.whoami("10.1.2.3")

    _settled(world, refuses_outsiders)  # the notification reached this process's cache
    assert world.whoami("127.0.0.9")["userId"]
    assert world.sign(address, 10)["status"] == "ACTIVITY_STATUS_COMPLETED"
    worst, statements = world.worst(address, 11)
    assert worst <= BUDGET, "\n".join([f"{worst} statements with a list:", *statements])
