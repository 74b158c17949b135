"""secrets: imported secrets, sealed at rest

Revision ID: 0026_secrets
Revises: (the heads of landed main; re-pointed at the one head when the chain is linear)
Create Date: 2026-11-26 06:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0026_secrets'
down_revision = ('0002_wallets', '0004_policies', '0006_identity_unique', '0007_pipeline',
                 '0007_webhook_notify', '0010_sessions', '0011_oauth', '0012_auth_proxy')
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('secrets',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=True),
    sa.Column('static_properties', sa.JSON(), nullable=False),
    sa.Column('wrapped_key', sa.Text(), nullable=False),
    sa.Column('ciphertext', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_secrets_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_secrets')),
    sa.UniqueConstraint('organization_id', 'name', name='uq_secrets_organization_name')
    )
    op.create_index('ix_secrets_org_created', 'secrets', ['organization_id', 'created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_secrets_org_created', table_name='secrets')
    op.drop_table('secrets')
