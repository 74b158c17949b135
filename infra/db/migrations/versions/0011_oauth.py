"""oauth: OAuth 2.0 client credentials, uses of OIDC tokens

Revision ID: 0011_oauth
Revises: 0001_foundation
Create Date: 2026-11-24 03:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0011_oauth'
down_revision = '0001_foundation'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('oauth2_credentials',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('provider', sa.String(length=64), nullable=False),
    sa.Column('client_id', sa.String(length=512), nullable=False),
    sa.Column('encrypted_client_secret', sa.Text(), nullable=False),
    sa.Column('wrapped_key', sa.Text(), nullable=False),
    sa.Column('ciphertext', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_oauth2_credentials_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_oauth2_credentials'))
    )
    with op.batch_alter_table('oauth2_credentials', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_oauth2_credentials_organization_id'), ['organization_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_oauth2_credentials_client_id'), ['client_id'], unique=False)

    op.create_table('oidc_token_uses',
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('usage', sa.String(length=16), nullable=False),
    sa.Column('fingerprint', sa.String(length=80), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('token_hash', 'usage', name=op.f('pk_oidc_token_uses'))
    )
    with op.batch_alter_table('oidc_token_uses', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_oidc_token_uses_expires_at'), ['expires_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('oidc_token_uses', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_oidc_token_uses_expires_at'))
    op.drop_table('oidc_token_uses')
    with op.batch_alter_table('oauth2_credentials', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_oauth2_credentials_client_id'))
        batch_op.drop_index(batch_op.f('ix_oauth2_credentials_organization_id'))
    op.drop_table('oauth2_credentials')
