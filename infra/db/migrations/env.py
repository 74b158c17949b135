"""Alembic environment: runs against the URL set by ``infra.db.migrate`` (``walletd db``), or,
under the plain ``alembic -c infra/db/alembic.ini`` command, the URL of ``WALLETD_*`` settings.

On PostgreSQL the migrations run under a session advisory lock, so two ``walletd db upgrade``
started at once (two containers of a deployment) take turns: the second waits, then finds the
database at the head and has nothing to do.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

import infra.db.models  # noqa: F401  (fills Base.metadata)
from infra.db.base import Base
from infra.db.engine import make_engine, normalize_url

config = context.config
target_metadata = Base.metadata

#: The advisory lock key of migrations (any constant; every walletd process uses this one).
MIGRATION_LOCK = 0x77616C6C65746D67  # "walletmg"


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from infra.settings import Settings

    return normalize_url(Settings.from_env().effective_database_url)


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is None:
        engine = make_engine(_url(), pool_size=1, application_name="walletd-migrate")
        try:
            with engine.connect() as connection:
                _run_locked(connection)
        finally:
            engine.dispose()
    else:  # a caller's connection (and transaction): the caller serialises
        _run(connectable)


def _run_locked(connection: Connection) -> None:
    """Run the migrations holding the migration lock (PostgreSQL; SQLite has one writer)."""
    if connection.dialect.name != "postgresql":
        _run(connection)
        return
    # A session lock, taken and committed before Alembic reads alembic_version, so the
    # waiter reads the version its predecessor committed.
    connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
    connection.commit()
    try:
        _run(connection)
    finally:
        if connection.in_transaction():
            connection.rollback()
        connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
