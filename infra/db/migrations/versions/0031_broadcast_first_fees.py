"""broadcast first fees: the fees of a transaction's first signature

Replacements of a stuck transaction stay under a multiple of the fees it was first signed
with (issue 31, docs/BROADCAST.md). Rows signed before this revision have none: their next
replacement takes the fees they carry then.

Revision ID: 0031_broadcast_first_fees
Revises: 0030_credential_lineage
Create Date: 2026-11-29 10:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = '0031_broadcast_first_fees'
down_revision = '0030_credential_lineage'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('send_transactions') as batch:
        batch.add_column(sa.Column('first_fees', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('send_transactions') as batch:
        batch.drop_column('first_fees')
