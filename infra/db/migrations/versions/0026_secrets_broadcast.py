"""secrets and broadcast: imported secrets (sealed), sent transactions, the nonce manager, email events

Revision ID: 0026_secrets_broadcast
Revises: 0025_access_controls
Create Date: 2026-11-26 06:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0026_secrets_broadcast'
down_revision = '0025_access_controls'
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
    op.create_table('send_transactions',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('activity_id', sa.String(length=36), nullable=False),
    sa.Column('caip2', sa.String(length=128), nullable=False),
    sa.Column('chain', sa.String(length=16), nullable=False),
    sa.Column('from_address', sa.String(length=128), nullable=False),
    sa.Column('nonce', sa.BigInteger(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('unsigned', sa.JSON(), nullable=False),
    sa.Column('raw_transaction', sa.Text(), nullable=False),
    sa.Column('tx_hash', sa.String(length=128), nullable=False),
    sa.Column('hashes', sa.JSON(), nullable=False),
    sa.Column('block_number', sa.BigInteger(), nullable=True),
    sa.Column('error', sa.JSON(), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('replacements', sa.Integer(), nullable=False),
    sa.Column('broadcast_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('next_check_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_send_transactions_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_send_transactions'))
    )
    op.create_index('ix_send_transactions_due', 'send_transactions', ['status', 'next_check_at'], unique=False)
    op.create_index(op.f('ix_send_transactions_organization_id'), 'send_transactions', ['organization_id'], unique=False)
    op.create_index(op.f('ix_send_transactions_activity_id'), 'send_transactions', ['activity_id'], unique=False)
    op.create_table('email_events',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('message_id', sa.String(length=256), nullable=False),
    sa.Column('event_type', sa.String(length=32), nullable=False),
    sa.Column('from_address', sa.String(length=512), nullable=False),
    sa.Column('to_address', sa.String(length=320), nullable=False),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_email_events_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_email_events'))
    )
    op.create_index('ix_email_events_org_to_at', 'email_events', ['organization_id', 'to_address', 'at'], unique=False)
    op.create_table('chain_nonces',
    sa.Column('caip2', sa.String(length=128), nullable=False),
    sa.Column('address', sa.String(length=128), nullable=False),
    sa.Column('next_nonce', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('caip2', 'address', name=op.f('pk_chain_nonces'))
    )


def downgrade() -> None:
    op.drop_table('chain_nonces')
    op.drop_index('ix_email_events_org_to_at', table_name='email_events')
    op.drop_table('email_events')
    op.drop_index(op.f('ix_send_transactions_activity_id'), table_name='send_transactions')
    op.drop_index(op.f('ix_send_transactions_organization_id'), table_name='send_transactions')
    op.drop_index('ix_send_transactions_due', table_name='send_transactions')
    op.drop_table('send_transactions')
    op.drop_index('ix_secrets_org_created', table_name='secrets')
    op.drop_table('secrets')
