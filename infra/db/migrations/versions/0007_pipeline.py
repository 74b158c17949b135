"""pipeline: PostgreSQL announces every settling status change itself (NOTIFY trigger)

The ingress waits for an activity with ``LISTEN walletd_activity_settled``. The trigger
sends the activity id when a row enters a settled status, in the transaction of the change
(delivered at commit), so no code path can forget it and no extra statement travels.
SQLite has no NOTIFY: the embedded default wakes waiters in process.

Revision ID: 0007_pipeline
Revises: 0001_foundation
Create Date: 2026-11-24 03:00:00.000000
"""
from alembic import op


revision = '0007_pipeline'
down_revision = '0001_foundation'
branch_labels = ('pipeline',)
depends_on = None

SETTLED = ("'ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_FAILED', 'ACTIVITY_STATUS_REJECTED', "
           "'ACTIVITY_STATUS_CONSENSUS_NEEDED'")


def upgrade() -> None:
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
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute("DROP TRIGGER IF EXISTS activities_settled ON activities")
    op.execute("DROP FUNCTION IF EXISTS walletd_activity_settled()")
