"""A process SIGKILLed mid-transaction leaves no leaf without its change and no change without
its leaf (PostgreSQL).

A child process runs walletd's own code paths (the ingress's ``submit``, the pool's
``run_activity``) and kills itself with SIGKILL at a chosen point: after the change and its
leaf were written but before the commit, or just after the commit. The parent then reads the
database, finishes the work with the real pipeline and checks ``walletd audit verify``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from infra.audit.verify import State, verify_database
from infra.db.models.activities import Activity
from infra.db.models.audit import AuditLeaf, AuditStaged
from infra.pipeline.execute import run_activity
from tests.integration.audit.conftest import World

CHILD = r'''
import json, os, signal, sys, time
from infra.bootstrap import bootstrap
from infra.db.unit_of_work import UnitOfWork
from infra.pipeline import execute, lifecycle
from infra.pipeline.submit import submit
from infra.settings import Settings

where, url, data_dir, body, headers, activity_id = sys.argv[1:7]
settings = Settings.from_env({"WALLETD_DATA_DIR": data_dir, "WALLETD_DATABASE_URL": url,
                              "WALLETD_BROKER_URL": "memory://", "WALLETD_SYNC_WAIT_MS": "50"})
services = bootstrap(settings, "embedded")

def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)

if where == "submit-before-commit":
    from infra.pipeline import store
    original = store.accept
    def accept(uow, activity, vote=None):
        original(uow, activity, vote)
        die()
    store.accept = accept
    submit(services, "sign_raw_payload", json.loads(headers), body.encode())
elif where == "execute-before-commit":
    original_commit = UnitOfWork.commit
    def commit(self):
        self.session.flush()
        die()
    UnitOfWork.commit = commit
    execute.run_activity(services, activity_id)
elif where == "execute-after-commit":
    original_commit = UnitOfWork.commit
    def commit(self):
        original_commit(self)
        die()
    UnitOfWork.commit = commit
    execute.run_activity(services, activity_id)
print("not killed", flush=True)
'''


def _child(world: World, where: str, body: str = "", headers: str = "{}",
           activity_id: str = "") -> None:
    data_dir = str(world.services.settings.data_dir)
    result = subprocess.run([sys.executable, "-c", CHILD, where, world.url, data_dir, body,
                             headers, activity_id], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[3])
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stdout,
                                                  result.stderr[-3000:])


def _entries(world: World, activity_id: str) -> list[str]:
    with world.services.read_session_factory() as session:
        staged = session.scalars(select(AuditStaged.entry).where(
            AuditStaged.activity_id == activity_id).order_by(AuditStaged.id)).all()
        leaves = session.scalars(select(AuditLeaf.data).where(
            AuditLeaf.activity_id == activity_id).order_by(AuditLeaf.idx)).all()
    return [json.loads(e)["status"] for e in [*leaves, *staged]]


def _status(world: World, activity_id: str) -> str | None:
    with world.services.read_session_factory() as session:
        return session.scalar(select(Activity.status).where(Activity.id == activity_id))


def _verify(world: World) -> None:
    world.checkpoint()
    with world.services.read_session_factory() as session:
        verify_database(session, state=State())


@pytest.fixture
def pending(world: World) -> tuple[World, str]:
    """An activity left PENDING: its execute message went to a broker nobody consumes."""
    address = world.create_wallet("crash")
    stop_pools = world.stop_pools
    stop_pools()
    answer = world.sign(address, 7)
    assert answer["status"] == "ACTIVITY_STATUS_PENDING", answer
    return world, answer["id"]


def test_killed_before_the_submit_commits_leaves_neither(world: World) -> None:
    address = world.create_wallet("crash")
    text = json.dumps({"type": "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2",
                       "timestampMs": str(time.time_ns() // 1_000_000),
                       "organizationId": world.root["organizationId"], "parameters": {
                           "signWith": address, "payload": "00" * 32,
                           "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
                           "hashFunction": "HASH_FUNCTION_NO_OP"}})
    with world.services.read_session_factory() as session:
        before = session.scalar(select(Activity.id).order_by(Activity.created_at.desc()))
    _child(world, "submit-before-commit", text, json.dumps(world.stamp(text)))
    with world.services.read_session_factory() as session:
        after = session.scalar(select(Activity.id).order_by(Activity.created_at.desc()))
        orphans = session.scalars(select(AuditStaged.activity_id)).all()
    assert after == before
    with world.services.read_session_factory() as session:
        known = set(session.scalars(select(Activity.id)).all())
    assert all(a is None or a in known for a in orphans)
    _verify(world)


def test_killed_before_the_pool_commits_leaves_neither(pending: tuple[World, str]) -> None:
    world, activity_id = pending
    _child(world, "execute-before-commit", activity_id=activity_id)
    assert _status(world, activity_id) == "ACTIVITY_STATUS_PENDING"
    assert _entries(world, activity_id) == ["ACTIVITY_STATUS_PENDING"]
    assert run_activity(world.services, activity_id) == "ACTIVITY_STATUS_COMPLETED"
    assert _entries(world, activity_id) == ["ACTIVITY_STATUS_PENDING", "ACTIVITY_STATUS_COMPLETED"]
    _verify(world)


def test_killed_after_the_pool_commits_keeps_both(pending: tuple[World, str]) -> None:
    world, activity_id = pending
    _child(world, "execute-after-commit", activity_id=activity_id)
    assert _status(world, activity_id) == "ACTIVITY_STATUS_COMPLETED"
    assert _entries(world, activity_id) == ["ACTIVITY_STATUS_PENDING", "ACTIVITY_STATUS_COMPLETED"]
    assert run_activity(world.services, activity_id) is None  # redelivery: nothing twice
    assert _entries(world, activity_id) == ["ACTIVITY_STATUS_PENDING", "ACTIVITY_STATUS_COMPLETED"]
    _verify(world)

