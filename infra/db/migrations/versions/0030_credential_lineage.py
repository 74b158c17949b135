"""credential lineage: which credential a session or API key was issued from

A credential issued by an activity that another API-key-type credential (a session or an API
key) stamped remembers the root of that credential's lineage, so that MFA never counts an
approval by a credential of the proposer's own lineage (a stolen session refreshing itself
into a second "independent" session; issue 31, docs/ACCESS.md).

Revision ID: 0030_credential_lineage
Revises: 0029_rows_changed
Create Date: 2026-11-29 08:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = '0030_credential_lineage'
down_revision = '0029_rows_changed'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('api_keys') as batch:
        batch.add_column(sa.Column('lineage_root_id', sa.String(length=36), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('api_keys') as batch:
        batch.drop_column('lineage_root_id')
