"""seal events: which of the sealed keyring's events the audit log holds a leaf of

Revision ID: 0027_seal_events
Revises: 0026_secrets_broadcast
Create Date: 2026-11-26 13:30:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0027_seal_events'
down_revision = '0026_secrets_broadcast'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('audit_seal_events',
    sa.Column('event_id', sa.String(length=64), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('event_id', name=op.f('pk_audit_seal_events'))
    )


def downgrade() -> None:
    op.drop_table('audit_seal_events')
