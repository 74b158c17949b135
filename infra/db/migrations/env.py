"""Alembic environment: runs against the URL set by ``infra.db.migrate``."""

from __future__ import annotations

from alembic import context

import infra.db.models  # noqa: F401  (fills Base.metadata)
from infra.db.base import Base
from infra.db.engine import make_engine

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url") or ""
    connectable = config.attributes.get("connection")
    if connectable is None:
        engine = make_engine(url)
        try:
            with engine.connect() as connection:
                _run(connection)
        finally:
            engine.dispose()
    else:
        _run(connectable)


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
