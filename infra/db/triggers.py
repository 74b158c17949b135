"""Database triggers the pipeline relies on, for PostgreSQL and SQLite.

* ``users.view_version`` takes a new random value whenever anything a user's wire view
  (``v1User``) shows changes: the user row itself, or a row of one of
  :data:`USER_VIEW_SOURCES` that belongs to the user. Random, not counted: a version seen
  inside a transaction that then rolled back is never reached again by another. Rendered
  views are remembered per process by ``(user id, view_version)`` (``infra.views.users``),
  so the version must move on every path that writes those rows,
  raw SQL and cascades included; only the database can promise that. A concept that adds a
  section to ``v1User`` (``USER_SECTIONS``) adds its table here, in a migration of its own
  that calls :func:`create_user_view_triggers` for it.
* On PostgreSQL, ``NOTIFY walletd_activity_settled`` with the id when an activity enters a
  settled status (migration ``0007_pipeline`` declares it; see ``infra.pipeline.wait``).
* On SQLite, every write to one of :data:`ANNOUNCED_TABLES` counts one more in its
  ``rows_changed`` row (:func:`create_change_counters`), where PostgreSQL's triggers send
  ``NOTIFY`` (migrations ``0009_webhook_notify``, ``0021_hot_path``): the per-process caches
  of ``infra.db.announced`` read the counts before they answer.

Migrations call these functions with the table names they knew when they were written;
``Base.metadata.create_all`` (tests' scratch databases) installs the current set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sqlalchemy import event, text
from sqlalchemy.engine import Connection

#: Tables whose rows (by their ``user_id``) appear in ``v1User``.
USER_VIEW_SOURCES: Final = ("api_keys", "authenticators", "oauth_providers", "user_tag_assignments",
                            "mfa_policies")


def _postgresql(tables: Iterable[str]) -> list[str]:
    fresh = "floor(random() * 4611686018427387903)::bigint"
    statements = [
        """CREATE OR REPLACE FUNCTION walletd_user_row_changed() RETURNS trigger AS $$
        BEGIN
            IF NEW.view_version IS NOT DISTINCT FROM OLD.view_version THEN
                NEW.view_version := FRESH;
            END IF;
            RETURN NEW;
        END $$ LANGUAGE plpgsql""",
        """CREATE OR REPLACE FUNCTION walletd_user_section_changed() RETURNS trigger AS $$
        BEGIN
            IF TG_OP <> 'INSERT' THEN
                UPDATE users SET view_version = FRESH WHERE id = OLD.user_id;
            END IF;
            IF TG_OP = 'INSERT'
               OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
                UPDATE users SET view_version = FRESH WHERE id = NEW.user_id;
            END IF;
            RETURN NULL;
        END $$ LANGUAGE plpgsql""",
    ]
    statements = [ddl.replace("FRESH", fresh) for ddl in statements] + [
        "DROP TRIGGER IF EXISTS users_view_version ON users",
        """CREATE TRIGGER users_view_version BEFORE UPDATE ON users FOR EACH ROW
        EXECUTE FUNCTION walletd_user_row_changed()""",
    ]
    for table in tables:
        statements += [
            f"DROP TRIGGER IF EXISTS {table}_user_view ON {table}",
            f"""CREATE TRIGGER {table}_user_view AFTER INSERT OR UPDATE OR DELETE ON {table}
            FOR EACH ROW EXECUTE FUNCTION walletd_user_section_changed()""",
        ]
    return statements


def _sqlite(tables: Iterable[str]) -> list[str]:
    bump = "UPDATE users SET view_version = abs(random()) WHERE id = {}.user_id;"
    statements = [
        "DROP TRIGGER IF EXISTS users_view_version",
        # Recursive triggers are off in SQLite: the inner UPDATE does not fire this again.
        """CREATE TRIGGER users_view_version AFTER UPDATE ON users
        WHEN NEW.view_version = OLD.view_version
        BEGIN UPDATE users SET view_version = abs(random()) WHERE id = NEW.id; END""",
    ]
    for table in tables:
        for op, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            name = f"{table}_user_view_{op.lower()}"
            body = " ".join(bump.format(r) for r in rows)
            statements += [f"DROP TRIGGER IF EXISTS {name}",
                           f"CREATE TRIGGER {name} AFTER {op} ON {table} BEGIN {body} END"]
    return statements


#: Tables per-process caches depend on (``infra.db.announced``; the access controls'
#: since ``0032_access_announced``, ``infra.access.changes``).
ANNOUNCED_TABLES: Final = ("api_keys", "wallets", "wallet_accounts", "private_keys",
                           "private_key_addresses", "webhook_endpoints", "ip_allowlists",
                           "mfa_policies", "session_profiles", "auth_proxy_configs")


def create_change_counters(connection: Connection, tables: Iterable[str]) -> None:
    """SQLite: make every write to ``tables`` count in ``rows_changed`` (PostgreSQL: nothing,
    its triggers announce with ``NOTIFY``)."""
    if connection.dialect.name != "sqlite":
        return
    for table in tables:
        connection.execute(text("INSERT OR IGNORE INTO rows_changed (name, generation) "
                                "VALUES (:name, 0)"), {"name": table})
        for op in ("INSERT", "UPDATE", "DELETE"):
            trigger = f"{table}_counted_{op.lower()}"
            connection.execute(text(f"DROP TRIGGER IF EXISTS {trigger}"))
            connection.execute(text(
                f"CREATE TRIGGER {trigger} AFTER {op} ON {table} BEGIN "
                f"UPDATE rows_changed SET generation = generation + 1 WHERE name = '{table}'; "
                "END"))


def create_user_view_triggers(connection: Connection, tables: Iterable[str]) -> None:
    """Make writes to ``tables`` (and to ``users``) move ``users.view_version``."""
    ddl = _postgresql(tables) if connection.dialect.name == "postgresql" else _sqlite(tables)
    for statement in ddl:
        connection.execute(text(statement))


def install_on_create_all(metadata: Any) -> None:
    """Install the current triggers whenever ``metadata.create_all`` creates the tables."""

    @event.listens_for(metadata, "after_create")
    def _after_create(_target: Any, connection: Connection, **_kw: Any) -> None:
        create_user_view_triggers(connection, USER_VIEW_SOURCES)
        create_change_counters(connection, ANNOUNCED_TABLES)
