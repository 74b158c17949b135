"""The hot path's statements go to a cursor of the session's driver connection
(``infra.db.prepared``): what SQLAlchemy would have done around them must still happen.

Rows come back by label, decoded as SQLAlchemy decodes them (JSON, datetimes: on SQLite
from stored text); listeners see every statement; a driver error arrives as SQLAlchemy's
exception, and a lost connection is invalidated and classed transient, so the pipeline's
retry rule and the session's recovery work as before. PostgreSQL and SQLite alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    event,
    insert,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from infra.db.engine import make_engine
from infra.db.prepared import Prepared
from infra.pipeline.execute import is_transient

_META = MetaData()
_THINGS = Table("prepared_things", _META, Column("id", String(36), primary_key=True),
                Column("n", Integer, nullable=False), Column("doc", JSON, nullable=False),
                Column("at", DateTime(timezone=True), nullable=True))
_INSERT = Prepared(insert(_THINGS).values(id=bindparam("id"), n=bindparam("n"),
                                          doc=bindparam("doc", type_=_THINGS.c.doc.type),
                                          at=bindparam("at", type_=_THINGS.c.at.type)))
_READ = Prepared(select(_THINGS.c.id.label("t_id"), _THINGS.c.n.label("t_n"),
                        _THINGS.c.doc.label("t_doc"), _THINGS.c.at.label("t_at"))
                 .where(_THINGS.c.n >= bindparam("n")).order_by(_THINGS.c.n))
_AT = datetime(2026, 11, 28, 21, 0, 0, 123000, tzinfo=UTC)


@pytest.fixture(params=["postgresql", "sqlite"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    url = (request.getfixturevalue("fresh_pg_url") if request.param == "postgresql"
           else f"sqlite:///{tmp_path / 'prepared.db'}")
    found = make_engine(url)
    _META.create_all(found)
    yield found
    found.dispose()


def test_rows_come_back_by_label_decoded_as_sqlalchemy_decodes_them(engine: Engine) -> None:
    with sessionmaker(engine)() as session:
        _INSERT.execute(session, {"id": "a", "n": 1, "doc": {"x": [1, "two"]}, "at": _AT})
        _INSERT.execute(session, {"id": "b", "n": 2, "doc": {}, "at": None})
        session.commit()
        rows = _READ.execute(session, {"n": 2})
        assert rows == [{"t_id": "b", "t_n": 2, "t_doc": {}, "t_at": None}]
        first = _READ.execute(session, {"n": 1})[0]
        assert first["t_doc"] == {"x": [1, "two"]}
        # Exactly what SQLAlchemy's own execution returns for the same row.
        expected = session.execute(select(_THINGS.c.at).where(_THINGS.c.id == "a")).scalar_one()
        assert first["t_at"] == expected and isinstance(first["t_at"], datetime)
        assert first["t_at"].replace(tzinfo=UTC) == _AT
        assert _READ.execute(session, {"n": 3}) == []


def test_listeners_see_each_statement_with_its_parameters(engine: Engine) -> None:
    seen: list[tuple[str, Any]] = []
    after: list[str] = []
    event.listen(engine, "before_cursor_execute",
                 lambda _c, _cur, statement, params, *_: seen.append((statement, params)))
    event.listen(engine, "after_cursor_execute",
                 lambda _c, _cur, statement, *_: after.append(statement))
    with sessionmaker(engine)() as session:
        _INSERT.execute(session, {"id": "a", "n": 1, "doc": {}, "at": None})
        _READ.execute(session, {"n": 0})
    assert [s.split()[0] for s, _ in seen] == ["INSERT", "SELECT"]
    assert "a" in (seen[0][1].values() if isinstance(seen[0][1], dict) else seen[0][1])
    assert after == [s for s, _ in seen]


def test_a_constraint_violation_is_sqlalchemys_integrity_error_and_the_session_recovers(
        engine: Engine) -> None:
    with sessionmaker(engine)() as session:
        _INSERT.execute(session, {"id": "a", "n": 1, "doc": {}, "at": None})
        session.commit()
        with pytest.raises(IntegrityError) as raised:
            _INSERT.execute(session, {"id": "a", "n": 2, "doc": {}, "at": None})
        assert isinstance(raised.value.orig, engine.dialect.loaded_dbapi.IntegrityError)
        assert not is_transient(raised.value)
        session.rollback()
        _INSERT.execute(session, {"id": "b", "n": 2, "doc": {}, "at": None})
        session.commit()
        assert [r["t_id"] for r in _READ.execute(session, {"n": 0})] == ["a", "b"]


def test_a_lost_connection_is_invalidated_and_transient_and_the_next_transaction_reconnects(
        fresh_pg_url: str) -> None:
    engine = make_engine(fresh_pg_url)
    _META.create_all(engine)
    with sessionmaker(engine)() as session:
        _INSERT.execute(session, {"id": "a", "n": 1, "doc": {}, "at": None})
        session.commit()
        pid = _backend_pid(session)
        with psycopg.connect(fresh_pg_url.replace("+psycopg", ""), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(DBAPIError) as raised:
            _READ.execute(session, {"n": 0})
        assert raised.value.connection_invalidated
        assert is_transient(raised.value)
        session.rollback()
        assert [r["t_id"] for r in _READ.execute(session, {"n": 0})] == ["a"]
        assert _backend_pid(session) != pid
    engine.dispose()


def _backend_pid(session: Session) -> int:
    return int(session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
