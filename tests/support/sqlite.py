"""A session on a fresh SQLite file with every table, for unit tests on real rows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.orm import Session

import infra.db.models  # noqa: F401 - every table
from infra.db.base import Base
from infra.db.engine import make_engine, make_session_factory
from infra.db.unit_of_work import UnitOfWork


@contextmanager
def sqlite_session(path: Path) -> Iterator[Session]:
    """A session on a new database at ``path`` (the engine is disposed on exit)."""
    engine = make_engine(f"sqlite:///{path}", pool_size=1)
    Base.metadata.create_all(engine)
    try:
        with make_session_factory(engine)() as session:
            yield session
    finally:
        engine.dispose()


@contextmanager
def sqlite_unit_of_work(path: Path) -> Iterator[UnitOfWork]:
    """An open unit of work (no activity listeners) on a new database at ``path``."""
    engine = make_engine(f"sqlite:///{path}", pool_size=1)
    Base.metadata.create_all(engine)
    try:
        with UnitOfWork(make_session_factory(engine)) as uow:
            yield uow
    finally:
        engine.dispose()
