"""seal reports: each worker process's seal as it last reported it (the console's seal state)

Revision ID: 0028_seal_reports
Revises: 0027_seal_events
Create Date: 2026-11-26 13:40:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0028_seal_reports'
down_revision = '0027_seal_events'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('seal_reports',
    sa.Column('process_id', sa.String(length=32), nullable=False),
    sa.Column('role', sa.String(length=128), nullable=False),
    sa.Column('sealed', sa.Boolean(), nullable=False),
    sa.Column('seal_type', sa.String(length=16), nullable=False),
    sa.Column('root_version', sa.Integer(), nullable=False),
    sa.Column('threshold', sa.Integer(), nullable=False),
    sa.Column('progress', sa.Integer(), nullable=False),
    sa.Column('reported_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('process_id', name=op.f('pk_seal_reports'))
    )


def downgrade() -> None:
    op.drop_table('seal_reports')
