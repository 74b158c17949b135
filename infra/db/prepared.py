"""Core statements compiled once and sent as their SQL text (the hot path's statements)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

_Processor = Callable[[Any], Any] | None


class _Compiled(NamedTuple):
    sql: str
    processors: dict[str, Any]
    #: The bind names, in the order a positional driver (SQLite's) takes them; ``None`` for a
    #: driver taking them by name (psycopg).
    positions: tuple[str, ...] | None
    names: tuple[str, ...]
    #: The labels of the columns of the rows it returns (``None``: it returns none).
    columns: tuple[str, ...] | None
    #: Per column, what SQLAlchemy would make of the driver's value (``None``: nothing);
    #: ``None`` when no column needs anything.
    decoders: tuple[_Processor, ...] | None


class Prepared:
    """A Core statement compiled once and run on the driver's cursor.

    ``session.execute`` walks a statement's cache key and looks it up in the compiled cache
    on every execution, and its execution context and result object cost about twice the
    driver's own work per statement; for the hot path's wide statements that is more Python
    than the round trip. Here the SQL, its bind processors and its columns' result
    processors are kept from the first execution, per dialect, and the statement goes to a
    cursor of the session's own connection (in its transaction). Rows come back as plain
    dicts by column label, decoded as SQLAlchemy would decode them (on PostgreSQL psycopg
    does it all: JSON as Python objects, aware datetimes; on SQLite the column types'
    processors turn stored text into datetimes and JSON).

    What SQLAlchemy does around a statement is kept: ``before_cursor_execute`` /
    ``after_cursor_execute`` listeners see it, and a driver error is raised as SQLAlchemy's
    exception (``IntegrityError``, ``OperationalError``, …), the connection invalidated first
    if the error says it is lost, so callers' error handling and the pipeline's
    transient/permanent rule are unchanged.
    """

    def __init__(self, statement: Any) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}

    def execute(self, session: Session, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        connection = session.connection()
        dialect = connection.dialect
        compiled = self._compiled.get(dialect.name)
        if compiled is None:
            compiled = self._compiled[dialect.name] = self._compile(dialect)
        processors = compiled.processors
        values = {}
        for name in compiled.names:
            value = params[name]
            process = processors.get(name)
            values[name] = process(value) if process is not None and value is not None else value
        if compiled.positions is not None:
            return _on_driver(connection, compiled, tuple(values[name] for name in compiled.positions))
        return _on_driver(connection, compiled, values)

    def _compile(self, dialect: Any) -> _Compiled:
        built = self.statement.compile(dialect=dialect)
        positions = tuple(built.positiontup) if dialect.positional else None
        returned = (self.statement.selected_columns if self.statement.is_select
                    else built.effective_returning)
        columns = tuple(column.name for column in returned) if returned else None
        decoders: tuple[_Processor, ...] | None = None
        if returned:
            decoders = tuple(column.type.dialect_impl(dialect).result_processor(dialect, None)
                             for column in returned)
            if not any(decoders):
                decoders = None
        return _Compiled(built.string, _bind_processors(built.binds, dialect), positions,
                         tuple(built.bind_names.values()), columns, decoders)


def _bind_processors(binds: Mapping[str, Any], dialect: Any) -> dict[str, Any]:
    """Per bind name, what the bind's type makes of a value for this dialect's driver (only
    binds whose type does something), through the types' public ``bind_processor``."""
    found = {}
    for name, bind in binds.items():
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            found[name] = process
    return found


def _on_driver(connection: Connection, compiled: _Compiled,
               values: dict[str, Any] | tuple[Any, ...]) -> list[dict[str, Any]]:
    """Run ``compiled`` on a cursor of ``connection``'s driver connection, as SQLAlchemy
    would but for its execution context and result object (see :class:`Prepared`); its
    rows, if it returns any, as dicts by column label."""
    dispatch = connection.dispatch
    dialect = connection.dialect
    driver = connection.connection.driver_connection
    assert driver is not None
    sql = compiled.sql
    cursor = driver.cursor()
    try:
        if dispatch.before_cursor_execute:
            dispatch.before_cursor_execute(connection, cursor, sql, values, None, False)
        try:
            cursor.execute(sql, values)
            found = cursor.fetchall() if compiled.columns is not None else []
        except dialect.loaded_dbapi.Error as error:
            lost = dialect.is_disconnect(error, driver, cursor)
            if lost:
                connection.invalidate(error)
            raise DBAPIError.instance(sql, values, error, dialect.loaded_dbapi.Error,
                                      connection_invalidated=lost, dialect=dialect) from error
        if dispatch.after_cursor_execute:
            dispatch.after_cursor_execute(connection, cursor, sql, values, None, False)
    finally:
        cursor.close()
    columns = compiled.columns
    if columns is None:
        return []
    decoders = compiled.decoders
    if decoders is None:
        return [dict(zip(columns, row, strict=True)) for row in found]
    return [{name: (decode(value) if decode is not None else value)
             for name, decode, value in zip(columns, decoders, row, strict=True)}
            for row in found]
