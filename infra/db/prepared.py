"""Core statements compiled once and sent as their SQL text (the hot path's statements)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session


class _Compiled(NamedTuple):
    sql: str
    processors: dict[str, Any]
    #: The bind names, in the order a positional driver (SQLite's) takes them; ``None`` for a
    #: driver taking them by name (psycopg).
    positions: tuple[str, ...] | None
    names: tuple[str, ...]
    #: Whether the rows (if any) may come back as the driver decodes them.
    direct: bool
    #: The labels of the columns of the rows it returns (``None``: it returns none).
    columns: tuple[str, ...] | None


class Prepared:
    """A Core statement compiled once and sent as its SQL text.

    ``session.execute`` walks a statement's cache key and looks it up in the compiled cache
    on every execution, which for these wide statements costs more Python than the round
    trip; here the SQL and its bind processors are kept from the first execution, per
    dialect. On PostgreSQL the statement goes to a psycopg cursor of the session's own
    connection (in its transaction), and the rows come back as plain dicts by column label,
    as psycopg decodes them (JSON as Python objects, aware datetimes): SQLAlchemy's execution
    context and result object cost about twice the driver's own work per statement, and
    none of their processing applies to text SQL. What SQLAlchemy would still do is kept:
    ``before_cursor_execute``/``after_cursor_execute`` listeners see the statement, and a
    driver error is raised as SQLAlchemy's exception (``IntegrityError``,
    ``OperationalError``, …), the connection invalidated first if the error says it is lost,
    so callers' error handling and the pipeline's transient/permanent rule are unchanged.
    On SQLite, whose JSON and datetimes SQLAlchemy decodes, a statement that returns rows
    goes through ``session.execute``; writes without rows go direct there too.
    """

    def __init__(self, statement: Any) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}

    def execute(self, session: Session, params: Mapping[str, Any]) -> Any:
        connection = session.connection()
        dialect = connection.dialect
        compiled = self._compiled.get(dialect.name)
        if compiled is None:
            compiled = self._compiled[dialect.name] = self._compile(dialect)
        if not compiled.direct:
            return session.execute(self.statement, dict(params))
        processors = compiled.processors
        values = {}
        for name in compiled.names:
            value = params[name]
            process = processors.get(name)
            values[name] = process(value) if process is not None and value is not None else value
        if compiled.positions is not None:
            return connection.exec_driver_sql(compiled.sql,
                                              tuple(values[name] for name in compiled.positions))
        return _on_driver(connection, compiled.sql, values, compiled.columns)

    def _compile(self, dialect: Any) -> _Compiled:
        built = self.statement.compile(dialect=dialect)
        direct = dialect.name == "postgresql" or (
            self.statement.is_dml and not built.effective_returning)
        positions = tuple(built.positiontup) if dialect.positional else None
        returned = (self.statement.selected_columns if self.statement.is_select
                    else built.effective_returning)
        columns = tuple(column.name for column in returned) if returned else None
        return _Compiled(built.string, dict(built._bind_processors), positions,
                         tuple(built.bind_names.values()), direct, columns)


class Rows:
    """The rows of a statement run on the driver (dicts by column label)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def all(self) -> list[dict[str, Any]]:
        return self._rows


def _on_driver(connection: Connection, sql: str, values: dict[str, Any],
               columns: tuple[str, ...] | None) -> Rows:
    """Run ``sql`` on a psycopg cursor of ``connection``, as SQLAlchemy would but for its
    result processing (see :class:`Prepared`); its rows by the ``columns`` it returns."""
    dispatch = connection.dispatch
    driver = connection.connection.driver_connection
    assert driver is not None
    cursor = driver.cursor()
    try:
        if dispatch.before_cursor_execute:
            dispatch.before_cursor_execute(connection, cursor, sql, values, None, False)
        try:
            cursor.execute(sql, values)
            found = ([dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
                     if columns is not None else [])
        except connection.dialect.loaded_dbapi.Error as error:
            lost = connection.dialect.is_disconnect(error, driver, cursor)
            if lost:
                connection.invalidate(error)
            raise DBAPIError.instance(sql, values, error, connection.dialect.loaded_dbapi.Error,
                                      connection_invalidated=lost,
                                      dialect=connection.dialect) from error
        if dispatch.after_cursor_execute:
            dispatch.after_cursor_execute(connection, cursor, sql, values, None, False)
    finally:
        cursor.close()
    return Rows(found)
