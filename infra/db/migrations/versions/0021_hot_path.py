"""hot path: the database announces changes to what processes remember

Every process remembers the API key behind a stamp and the key ``signWith`` names
(``infra.db.announced``). A statement-level trigger on each table those depend on sends
``NOTIFY walletd_rows_changed`` with the table's name, in the transaction of the change
(delivered at commit, so no code path can forget it); the caches forget everything then.
SQLite has no NOTIFY: there the caches stay empty.

Revision ID: 0021_hot_path
Revises: 0020_verified_identities
Create Date: 2026-11-26 06:00:00.000000
"""
from alembic import op

revision = '0021_hot_path'
down_revision = '0020_verified_identities'
branch_labels = None
depends_on = None

#: The tables the per-process caches read.
TABLES = ("api_keys", "wallets", "wallet_accounts", "private_keys", "private_key_addresses")


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute("""
        CREATE FUNCTION walletd_rows_changed() RETURNS trigger AS $$
        BEGIN
            PERFORM pg_notify('walletd_rows_changed', TG_TABLE_NAME);
            RETURN NULL;
        END
        $$ LANGUAGE plpgsql
    """)
    for table in TABLES:
        op.execute(f"""
            CREATE TRIGGER {table}_announced
            AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION walletd_rows_changed()
        """)


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    for table in TABLES:
        op.execute(f"DROP TRIGGER IF EXISTS {table}_announced ON {table}")
    op.execute("DROP FUNCTION IF EXISTS walletd_rows_changed()")
