"""pipeline: settling announced by PostgreSQL itself; users.view_version

``users.view_version`` moves (triggers, ``infra.db.triggers``) with every change to what a
user's wire view shows, so rendered views can be remembered by it.

The ingress waits for an activity with ``LISTEN walletd_activity_settled``. The trigger
sends the activity id when a row enters a settled status, in the transaction of the change
(delivered at commit), so no code path can forget it and no extra statement travels.
SQLite has no NOTIFY: the embedded default wakes waiters in process.

Revision ID: 0007_pipeline
Revises: 0001_foundation (and needs 0003_identity's tables)
Create Date: 2026-11-24 03:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

from infra.db.triggers import create_user_view_triggers

#: The tables shown in v1User when this migration was written.
USER_VIEW_SOURCES = ("api_keys", "authenticators", "oauth_providers", "user_tag_assignments")


# The file was renumbered (prefixes unique and in order); the id is kept: databases record it.
revision = '0007_pipeline'
down_revision = '0001_foundation'
branch_labels = None
depends_on = ('0003_identity',)

SETTLED = ("'ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_FAILED', 'ACTIVITY_STATUS_REJECTED', "
           "'ACTIVITY_STATUS_CONSENSUS_NEEDED'")


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('view_version', sa.BigInteger(), nullable=False,
                                      server_default='1'))
    create_user_view_triggers(op.get_bind(), USER_VIEW_SOURCES)
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(f"""
        CREATE FUNCTION walletd_activity_settled() RETURNS trigger AS $$
        BEGIN
            IF NEW.status IN ({SETTLED})
               AND NEW.status IS DISTINCT FROM OLD.status THEN
                PERFORM pg_notify('walletd_activity_settled', NEW.id);
            END IF;
            RETURN NULL;
        END
        $$ LANGUAGE plpgsql
    """)
    op.execute("""
        CREATE TRIGGER activities_settled AFTER UPDATE OF status ON activities
        FOR EACH ROW EXECUTE FUNCTION walletd_activity_settled()
    """)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    for table in USER_VIEW_SOURCES:
        if postgresql:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_user_view ON {table}")
        else:
            for verb in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_user_view_{verb}")
    op.execute("DROP TRIGGER IF EXISTS users_view_version" + (" ON users" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION IF EXISTS walletd_user_section_changed()")
        op.execute("DROP FUNCTION IF EXISTS walletd_user_row_changed()")
        op.execute("DROP TRIGGER IF EXISTS activities_settled ON activities")
        op.execute("DROP FUNCTION IF EXISTS walletd_activity_settled()")
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('view_version')
