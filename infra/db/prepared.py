"""Core statements compiled once and sent as their SQL text (the hot path's statements)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session


class Prepared:
    """A Core statement compiled once and sent as its SQL text on PostgreSQL.

    ``session.execute`` walks a statement's cache key and looks it up in the compiled cache
    on every execution, which for these wide statements costs more Python than the round
    trip; here the SQL and its bind processors are kept from the first execution. The rows
    come back as psycopg decodes them (JSON as Python objects, aware datetimes). Elsewhere
    (SQLite, whose JSON and datetimes SQLAlchemy decodes) it is ``session.execute``.
    """

    def __init__(self, statement: Any) -> None:
        self.statement = statement
        self._compiled: tuple[str, dict[str, Any], tuple[str, ...]] | None = None

    def execute(self, session: Session, params: Mapping[str, Any]) -> Any:
        connection = session.connection()
        if connection.dialect.name != "postgresql":
            return session.execute(self.statement, dict(params))
        compiled = self._compiled
        if compiled is None:
            built = self.statement.compile(dialect=connection.dialect)
            compiled = self._compiled = (built.string, dict(built._bind_processors),
                                         tuple(built.bind_names.values()))
        sql, processors, names = compiled
        values = {}
        for name in names:
            value = params[name]
            process = processors.get(name)
            values[name] = process(value) if process is not None and value is not None else value
        return connection.exec_driver_sql(sql, values)
