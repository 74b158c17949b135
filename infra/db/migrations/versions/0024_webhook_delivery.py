"""webhooks: index of an endpoint's pending deliveries by due time

A run of the notifier leases its endpoint's next due row after each attempt
(``notifier.actors``): this partial index keeps that lookup proportional to the endpoint's
pending rows, not to every delivery ever made.

Revision ID: 0024_webhook_delivery
Revises: 0023_audit_log
Create Date: 2026-11-26 05:45:00.000000
"""
import sqlalchemy as sa
from alembic import op


revision = '0024_webhook_delivery'
down_revision = '0023_audit_log'
branch_labels = None
depends_on = None

PENDING = sa.text("status = 'PENDING'")


def upgrade() -> None:
    op.create_index('ix_webhook_deliveries_endpoint_due', 'webhook_deliveries',
                    ['endpoint_id', 'next_attempt_at', 'id'], unique=False,
                    postgresql_where=PENDING, sqlite_where=PENDING)


def downgrade() -> None:
    op.drop_index('ix_webhook_deliveries_endpoint_due', table_name='webhook_deliveries')
