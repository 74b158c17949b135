"""The submit's wait for an activity to settle, on real PostgreSQL and on SQLite.

On PostgreSQL a waiting request is woken by ``NOTIFY`` and reads nothing while it waits;
before the listener is up (or without one) it polls and still sees the settled status. In the
process that settles the activity (the embedded default, any database) it is woken right
after the commit, and reads nothing while it waits either.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from infra.db.engine import make_engine, make_read_session_factory, make_session_factory
from infra.db.listen import Listener
from infra.db.migrate import upgrade
from infra.db.models.activities import Activity
from infra.db.models.organizations import Organization
from infra.db.unit_of_work import UnitOfWork
from infra.pipeline import lifecycle, store
from infra.pipeline.wait import NotifiedWaiter, PostgresWaiter, make_waiter

LONG = 30.0  # far longer than any of these waits takes; a hang fails the test instead


@pytest.fixture
def pg_engine(fresh_pg_url: str) -> Iterator[Engine]:
    upgrade(fresh_pg_url)
    engine = make_engine(fresh_pg_url)
    yield engine
    engine.dispose()


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path / 'waiter.db'}"
    upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def _pending(factory: sessionmaker[Session]) -> str:
    with factory() as session:
        org = Organization(name="waiter", root_quorum_threshold=1)
        session.add(org)
        session.flush()
        activity = Activity(organization_id=org.id, type="ACTIVITY_TYPE_CREATE_API_KEYS_V2",
                            status=lifecycle.PENDING, fingerprint="fp-" + org.id, body="{}",
                            timestamp_ms="1", intent={}, result={}, user_id=None)
        session.add(activity)
        session.commit()
        return activity.id


def _complete(factory: sessionmaker[Session], activity_id: str,
              settlements: lifecycle.Settlements | None = None) -> None:
    """What the executor does: claim, transition (NOTIFY on PostgreSQL), commit; announced in
    process too when given the process's ``settlements``."""
    with _unit(factory, settlements) as uow:
        activity = store.claim_status(uow.session, activity_id, lifecycle.PENDING)
        assert activity is not None
        store.transition(uow, activity, lifecycle.COMPLETED, result={"ok": {}})
        uow.commit()


def _unit(factory: sessionmaker[Session], settlements: lifecycle.Settlements | None) -> UnitOfWork:
    return UnitOfWork(factory, listeners=(settlements.on_activity_change,) if settlements else ())


class StatusReads:
    """Counts the waiter's status reads on ``engine`` (real statements, not a stand-in)."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0

        def _before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            if statement.lstrip().startswith("SELECT activities.status"):
                self.count += 1

        event.listen(engine, "before_cursor_execute", _before)


def _listener(engine: Engine) -> Listener:
    return Listener(engine.url.set(drivername="postgresql").render_as_string(hide_password=False))


def _listening(waiter: PostgresWaiter, listener: Listener) -> None:
    assert listener.connected.wait(LONG), "the LISTEN connection never came up"


def test_a_notified_wait_reads_nothing_until_the_activity_settles(pg_engine: Engine) -> None:
    factory = make_session_factory(pg_engine)
    listener = _listener(pg_engine)
    waiter = make_waiter(make_read_session_factory(pg_engine), listener)
    assert isinstance(waiter, PostgresWaiter)
    waiter._safety_interval = LONG  # only the notification may end this wait
    # no in-process announcement (no Settlements): NOTIFY alone
    _listening(waiter, listener)
    activity_id = _pending(factory)
    reads = StatusReads(pg_engine)
    with waiter.watch() as watch:
        watch.follow(activity_id)  # before the work is handed off, as the submit does
        done = threading.Thread(target=_complete, args=(factory, activity_id))
        done.start()
        announced = watch.wait(LONG, known_unsettled=True)
        done.join()
    listener.stop()
    assert announced
    assert reads.count == 0
    assert waiter.status(activity_id) == lifecycle.COMPLETED


def test_a_wait_started_after_the_activity_settled_returns_at_once(pg_engine: Engine) -> None:
    factory = make_session_factory(pg_engine)
    listener = _listener(pg_engine)
    waiter = make_waiter(make_read_session_factory(pg_engine), listener)
    activity_id = _pending(factory)
    _complete(factory, activity_id)
    assert waiter.wait(activity_id, LONG) == lifecycle.COMPLETED
    assert isinstance(waiter, PostgresWaiter)
    waiter.stop()
    listener.stop()


def test_without_the_listener_the_wait_polls_and_still_sees_the_result(pg_engine: Engine) -> None:
    factory = make_session_factory(pg_engine)
    # The listener's DSN points nowhere: LISTEN never comes up, notifications never arrive.
    nowhere = Listener("postgresql://postgres@127.0.0.1:1/none?connect_timeout=1")
    waiter = PostgresWaiter(make_read_session_factory(pg_engine), nowhere)
    # no in-process announcement (no Settlements): as if settled by another process
    activity_id = _pending(factory)
    reads = StatusReads(pg_engine)
    done = threading.Timer(0.2, _complete, args=(factory, activity_id))
    done.start()
    try:
        assert waiter.wait(activity_id, LONG) == lifecycle.COMPLETED
        done.join()
        assert not waiter._notified()
        assert reads.count >= 2  # it had to look again after the first read found it PENDING
    finally:
        nowhere.stop()


def test_an_unsettled_activity_times_out_with_its_status(pg_engine: Engine) -> None:
    factory = make_session_factory(pg_engine)
    listener = _listener(pg_engine)
    waiter = make_waiter(make_read_session_factory(pg_engine), listener)
    activity_id = _pending(factory)
    assert waiter.wait(activity_id, 0.05) == lifecycle.PENDING
    assert isinstance(waiter, PostgresWaiter)
    waiter.stop()
    listener.stop()


def test_sqlite_waiter_is_woken_in_process_and_reads_nothing_while_waiting(
        sqlite_engine: Engine) -> None:
    factory = make_session_factory(sqlite_engine)
    settlements = lifecycle.Settlements()
    waiter = make_waiter(make_read_session_factory(sqlite_engine), None, settlements)
    assert type(waiter) is NotifiedWaiter
    waiter._safety_interval = LONG  # only the in-process wake may end this wait
    activity_id = _pending(factory)
    reads = StatusReads(sqlite_engine)
    try:
        with waiter.watch() as watch:
            watch.follow(activity_id)
            done = threading.Timer(0.1, _complete, args=(factory, activity_id, settlements))
            done.start()
            assert watch.wait(LONG, known_unsettled=True)
            done.join()
        assert reads.count == 0
        assert waiter.status(activity_id) == lifecycle.COMPLETED
    finally:
        waiter.stop()


def test_a_rolled_back_settle_wakes_nobody(sqlite_engine: Engine) -> None:
    factory = make_session_factory(sqlite_engine)
    settlements = lifecycle.Settlements()
    waiter = make_waiter(make_read_session_factory(sqlite_engine), None, settlements)
    activity_id = _pending(factory)
    try:
        with waiter.watch() as watch:
            watch.follow(activity_id)
            with _unit(factory, settlements) as uow:
                activity = store.claim_status(uow.session, activity_id, lifecycle.PENDING)
                assert activity is not None
                store.transition(uow, activity, lifecycle.COMPLETED, result={"ok": {}})
                uow.rollback()
            assert not watch._event.is_set()
        assert waiter.status(activity_id) == lifecycle.PENDING
    finally:
        waiter.stop()
