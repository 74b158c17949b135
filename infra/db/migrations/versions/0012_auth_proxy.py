"""auth proxy: per-organization configuration, proxy user and sealed key

Revision ID: 0012_auth_proxy
Revises: 0001_foundation
Create Date: 2026-11-24 03:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0012_auth_proxy'
down_revision = '0001_foundation'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('auth_proxy_configs',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('api_public_key', sa.String(length=66), nullable=False),
    sa.Column('api_private_key_sealed', sa.Text(), nullable=False),
    sa.Column('sealed_to', sa.String(length=130), nullable=False),
    sa.Column('settings', sa.JSON(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_auth_proxy_configs_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_auth_proxy_configs')),
    sa.UniqueConstraint('organization_id', name=op.f('uq_auth_proxy_configs_organization_id'))
    )


def downgrade() -> None:
    op.drop_table('auth_proxy_configs')
