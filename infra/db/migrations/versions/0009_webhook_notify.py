"""webhooks: PostgreSQL announces endpoint changes and deliveries left to the relay

``walletd_endpoints_changed`` (payload: organization id) on any write to
``webhook_endpoints``: processes forget which organizations have no endpoint
(``infra.webhooks.outbox``). ``walletd_deliveries_due`` when a delivery row is written
without being dispatched at commit: the notifier's relay wakes instead of polling.

Revision ID: 0007_webhook_notify
Revises: 0006_webhook_in_flight
Create Date: 2026-11-24 03:40:00.000000
"""
from alembic import op


# The file was renumbered (prefixes unique and in order); the id is kept: databases record it.
revision = '0007_webhook_notify'
down_revision = '0006_webhook_in_flight'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute("""
        CREATE FUNCTION walletd_endpoints_changed() RETURNS trigger AS $$
        BEGIN
            IF TG_OP <> 'INSERT' THEN
                PERFORM pg_notify('walletd_endpoints_changed', OLD.organization_id);
            END IF;
            IF TG_OP <> 'DELETE' THEN
                PERFORM pg_notify('walletd_endpoints_changed', NEW.organization_id);
            END IF;
            RETURN NULL;
        END $$ LANGUAGE plpgsql
    """)
    op.execute("""
        CREATE TRIGGER webhook_endpoints_changed AFTER INSERT OR UPDATE OR DELETE
        ON webhook_endpoints FOR EACH ROW EXECUTE FUNCTION walletd_endpoints_changed()
    """)
    op.execute("""
        CREATE FUNCTION walletd_deliveries_due() RETURNS trigger AS $$
        BEGIN
            PERFORM pg_notify('walletd_deliveries_due', '');
            RETURN NULL;
        END $$ LANGUAGE plpgsql
    """)
    op.execute("""
        CREATE TRIGGER webhook_deliveries_due AFTER INSERT ON webhook_deliveries
        FOR EACH ROW WHEN (NEW.dispatched_until IS NULL)
        EXECUTE FUNCTION walletd_deliveries_due()
    """)


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute("DROP TRIGGER IF EXISTS webhook_deliveries_due ON webhook_deliveries")
    op.execute("DROP FUNCTION IF EXISTS walletd_deliveries_due()")
    op.execute("DROP TRIGGER IF EXISTS webhook_endpoints_changed ON webhook_endpoints")
    op.execute("DROP FUNCTION IF EXISTS walletd_endpoints_changed()")
