"""rows changed: SQLite counts the writes PostgreSQL announces, so its processes may remember too

PostgreSQL's triggers announce writes to the tables per-process caches depend on with
``NOTIFY`` (``0009_webhook_notify``, ``0021_hot_path``); SQLite has no ``NOTIFY``, so there
the caches stayed empty and every request read the API key behind its stamp, the key
``signWith`` names and the organization's webhook endpoints. Now a trigger counts each write
in ``rows_changed`` (one row per table) and the caches read the counts before answering
(``infra.db.announced``). On PostgreSQL the table stays empty.

Revision ID: 0029_rows_changed
Revises: 0028_seal_reports
Create Date: 2026-11-26 15:30:00.000000
"""
from alembic import op
import sqlalchemy as sa

from infra.db.triggers import create_change_counters

revision = '0029_rows_changed'
down_revision = '0028_seal_reports'
branch_labels = None
depends_on = None

#: The tables the per-process caches read, as of this revision.
TABLES = ("api_keys", "wallets", "wallet_accounts", "private_keys", "private_key_addresses",
          "webhook_endpoints")


def upgrade() -> None:
    op.create_table('rows_changed',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('generation', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_rows_changed'))
    )
    create_change_counters(op.get_bind(), TABLES)


def downgrade() -> None:
    if op.get_bind().dialect.name == 'sqlite':
        for table in TABLES:
            for action in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_counted_{action}")
    op.drop_table('rows_changed')
