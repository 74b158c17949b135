"""sessions: one-time codes and verification tokens

Revision ID: 0010_sessions
Revises: 0001_foundation
Create Date: 2026-11-24 03:00:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0010_sessions'
down_revision = '0001_foundation'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('otp_codes',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('purpose', sa.String(length=16), nullable=False),
    sa.Column('otp_type', sa.String(length=32), nullable=False),
    sa.Column('contact', sa.String(length=320), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=True),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('key_version', sa.Integer(), nullable=False),
    sa.Column('alphanumeric', sa.Boolean(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_otp_codes_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_otp_codes'))
    )
    op.create_index(op.f('ix_otp_codes_organization_id'), 'otp_codes', ['organization_id'], unique=False)
    op.create_index('ix_otp_codes_contact', 'otp_codes', ['organization_id', 'contact'], unique=False)
    op.create_table('verification_tokens',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('otp_id', sa.String(length=36), nullable=False),
    sa.Column('activity_id', sa.String(length=36), nullable=True),
    sa.Column('verification_type', sa.String(length=32), nullable=False),
    sa.Column('contact', sa.String(length=320), nullable=False),
    sa.Column('public_key', sa.String(length=160), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('signup_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('signup_fingerprint', sa.String(length=80), nullable=True),
    sa.Column('login_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('login_fingerprint', sa.String(length=80), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_verification_tokens_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_verification_tokens'))
    )
    op.create_index(op.f('ix_verification_tokens_organization_id'), 'verification_tokens', ['organization_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_verification_tokens_organization_id'), table_name='verification_tokens')
    op.drop_table('verification_tokens')
    op.drop_index('ix_otp_codes_contact', table_name='otp_codes')
    op.drop_index(op.f('ix_otp_codes_organization_id'), table_name='otp_codes')
    op.drop_table('otp_codes')
