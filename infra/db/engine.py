"""Engine construction for PostgreSQL (psycopg 3) and SQLite."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker


def normalize_url(url: str) -> str:
    """Use the psycopg 3 driver for plain ``postgresql://`` URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str, *, pool_size: int = 10, application_name: str = "walletd") -> Engine:
    """An engine configured the same way by every process.

    On PostgreSQL, ``application_name`` shows in ``pg_stat_activity`` which process holds
    a connection (``walletd-ingress``, ``walletd-worker[accounts,signing]``, …).
    """
    url = normalize_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 30}, pool_size=pool_size
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    # No pre-ping: it costs a round trip on every checkout. A connection broken by a server
    # restart fails one statement, SQLAlchemy then invalidates the whole pool, workers retry
    # (transient errors) and the ingress answers 503; pool_recycle bounds connection age.
    return create_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_recycle=1800,
                         connect_args={"application_name": application_name[:63]})


_WRITE_LOCKS: weakref.WeakKeyDictionary[Engine, threading.RLock] = weakref.WeakKeyDictionary()


def write_lock(engine: Engine) -> threading.RLock | None:
    """The lock this process's write transactions on ``engine`` take turns with (SQLite).

    SQLite lets one writer in at a time; threads that collide otherwise back off in its
    busy handler, sleeping up to 100 ms a turn, which under load makes second-long tails.
    Queued on a lock instead, each waiter starts the moment the previous writer ends.
    Readers (WAL) never take it. ``None`` for PostgreSQL, whose row locks do the work.
    """
    if engine.dialect.name != "sqlite":
        return None
    return _WRITE_LOCKS.setdefault(engine, threading.RLock())


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


def make_read_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions for reads only, in autocommit mode on the same pool.

    No BEGIN/ROLLBACK round trips around each read; each statement sees committed data.
    Never use these for writes: nothing would make them atomic.
    """
    return sessionmaker(engine.execution_options(isolation_level="AUTOCOMMIT"),
                        expire_on_commit=False)
