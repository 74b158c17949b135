"""Activity changes are counted (and logged) once their transaction commits, never on rollback.

The real embedded composition on SQLite: a submission stores a PENDING activity; a
transition to FAILED in a transaction that rolls back leaves no count, the same transition
committed counts once and observes its submit-to-settle latency.
"""

from __future__ import annotations

import logging
import threading

import pytest

from infra.observability import metrics
from infra.pipeline import lifecycle, store
from tests.unit.pipeline.conftest import Pipeline

TYPE = "ACTIVITY_TYPE_CREATE_API_KEYS_V2"


def counted(status: str) -> float:
    return metrics.ACTIVITIES.labels(TYPE, status)._value.get()


def settled() -> float:
    return sum(bucket.get() for bucket in metrics.SETTLE_SECONDS.labels(
        TYPE, lifecycle.FAILED)._buckets)


def test_counted_at_commit_only(pipeline: Pipeline, caplog: pytest.LogCaptureFixture) -> None:
    pending_before = counted(lifecycle.PENDING)
    activity_id, _ = pipeline.submit_create_api_key()
    assert counted(lifecycle.PENDING) == pending_before + 1

    failed_before, settled_before = counted(lifecycle.FAILED), settled()
    failure = {"code": 13, "message": "test", "details": []}
    with pipeline.services.uow() as uow:
        activity = store.read(uow.session, activity_id)
        assert activity is not None
        store.transition(uow, activity, lifecycle.FAILED, failure=failure)
        uow.rollback()
    assert counted(lifecycle.FAILED) == failed_before
    assert settled() == settled_before

    # Lines from before this point (the submission's own "new -> PENDING", captured when an
    # earlier test left the logger at INFO) are not what this step asserts.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="walletd.activity"), \
            pipeline.services.uow() as uow:
        activity = store.read(uow.session, activity_id)
        assert activity is not None
        store.transition(uow, activity, lifecycle.FAILED, failure=failure)
        uow.commit()
    assert counted(lifecycle.FAILED) == failed_before + 1
    assert settled() == settled_before + 1
    # This thread's lines only: in a full run, another test's worker threads may still log.
    lines = [r for r in caplog.records
             if r.name == "walletd.activity" and r.thread == threading.get_ident()]
    assert [r.getMessage() for r in lines] == [
        f"{TYPE} {lifecycle.PENDING} -> {lifecycle.FAILED}"]
