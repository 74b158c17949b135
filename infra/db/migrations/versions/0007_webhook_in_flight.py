"""webhooks: index for counting an endpoint's deliveries in flight

Revision ID: 0006_webhook_in_flight
Revises: 0005_webhooks
Create Date: 2026-11-23 08:20:00.000000
"""
from alembic import op


# The file was renumbered (prefixes unique and in order); the id is kept: databases record it.
revision = '0006_webhook_in_flight'
down_revision = '0005_webhooks'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index('ix_webhook_deliveries_endpoint_sending', ['endpoint_id', 'sending_until'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_index('ix_webhook_deliveries_endpoint_sending')
