"""access announced: the access caches forget on the database's announcements, as the others do

IP allow-lists (with the auth proxy key they exempt), MFA policies and session profiles are
remembered per process. Until now an activity that changed one told its own process after
the commit and PostgreSQL announced allow-list and MFA-policy rows on a channel of their own,
so on SQLite a change made by another process or by plain SQL was never seen, a session
profile was remembered for good, and a change to the auth proxy's key did not reach the
allow-lists that exempt it. Now these tables announce like the others
(``infra.db.announced``): a statement trigger sends ``NOTIFY walletd_rows_changed`` with the
table's name on PostgreSQL (the function of ``0021_hot_path``), triggers count the writes in
``rows_changed`` on SQLite (``0029_rows_changed``); the per-row ``walletd_access_changed``
triggers of ``0025_access_controls`` go.

Revision ID: 0032_access_announced
Revises: 0031_broadcast_first_fees
Create Date: 2026-12-02 10:00:00.000000
"""
from alembic import op

from infra.db.triggers import create_change_counters

revision = '0032_access_announced'
down_revision = '0031_broadcast_first_fees'
branch_labels = None
depends_on = None

#: The tables the access caches read, as of this revision.
TABLES = ("ip_allowlists", "mfa_policies", "session_profiles", "auth_proxy_configs")
#: The tables 0025_access_controls announced row by row.
_ROW_ANNOUNCED = ("ip_allowlists", "mfa_policies")

_ACCESS_CHANGED = """
CREATE OR REPLACE FUNCTION walletd_access_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('walletd_access_changed',
                    COALESCE(NEW.organization_id, OLD.organization_id));
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == 'postgresql':
        for table in _ROW_ANNOUNCED:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_access_changed ON {table}")
        op.execute("DROP FUNCTION IF EXISTS walletd_access_changed()")
        for table in TABLES:
            op.execute(f"""
                CREATE TRIGGER {table}_announced
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
                FOR EACH STATEMENT EXECUTE FUNCTION walletd_rows_changed()
            """)
    create_change_counters(bind, TABLES)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == 'postgresql':
        for table in TABLES:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_announced ON {table}")
        op.execute(_ACCESS_CHANGED)
        for table in _ROW_ANNOUNCED:
            op.execute(f"CREATE TRIGGER {table}_access_changed AFTER INSERT OR UPDATE OR DELETE "
                       f"ON {table} FOR EACH ROW EXECUTE FUNCTION walletd_access_changed()")
        return
    for table in TABLES:
        for action in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_counted_{action}")
    op.execute("DELETE FROM rows_changed WHERE name IN (" +
               ", ".join(f"'{t}'" for t in TABLES) + ")")
