"""Core statements compiled once and sent as their SQL text (the hot path's statements)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

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


class Prepared:
    """A Core statement compiled once and sent as its SQL text.

    ``session.execute`` walks a statement's cache key and looks it up in the compiled cache
    on every execution, which for these wide statements costs more Python than the round
    trip; here the SQL and its bind processors are kept from the first execution, per
    dialect. On PostgreSQL the rows come back as psycopg decodes them (JSON as Python
    objects, aware datetimes). On SQLite, whose JSON and datetimes SQLAlchemy decodes, a
    statement that returns rows goes through ``session.execute``; writes without rows go
    direct there too.
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
        return connection.exec_driver_sql(compiled.sql, values)

    def _compile(self, dialect: Any) -> _Compiled:
        built = self.statement.compile(dialect=dialect)
        direct = dialect.name == "postgresql" or (
            self.statement.is_dml and not built.effective_returning)
        positions = tuple(built.positiontup) if dialect.positional else None
        return _Compiled(built.string, dict(built._bind_processors), positions,
                         tuple(built.bind_names.values()), direct)
