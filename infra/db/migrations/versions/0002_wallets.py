"""wallets: wallets, accounts, private keys, import targets, service keys

Revision ID: 0002_wallets
Revises: 0001_foundation
Create Date: 2026-11-22 04:40:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0002_wallets'
down_revision = '0001_foundation'
branch_labels = None
depends_on = None


def _ts() -> list[sa.Column]:
    return [sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
            sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False)]


def upgrade() -> None:
    op.create_table('wallets',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('wrapped_key', sa.Text(), nullable=False),
    sa.Column('ciphertext', sa.Text(), nullable=False),
    sa.Column('imported', sa.Boolean(), nullable=False),
    sa.Column('exported', sa.Boolean(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    *_ts(),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_wallets_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_wallets'))
    )
    with op.batch_alter_table('wallets', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_wallets_organization_id'), ['organization_id'], unique=False)

    op.create_table('wallet_accounts',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('wallet_id', sa.String(length=36), nullable=False),
    sa.Column('curve', sa.String(length=32), nullable=False),
    sa.Column('path_format', sa.String(length=32), nullable=False),
    sa.Column('path', sa.String(length=256), nullable=False),
    sa.Column('address_format', sa.String(length=64), nullable=False),
    sa.Column('address', sa.String(length=256), nullable=False),
    sa.Column('public_key', sa.String(length=160), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=True),
    *_ts(),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_wallet_accounts_organization_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['wallet_id'], ['wallets.id'], name=op.f('fk_wallet_accounts_wallet_id_wallets'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_wallet_accounts')),
    sa.UniqueConstraint('wallet_id', 'curve', 'path', 'address_format', name='uq_wallet_accounts_derivation')
    )
    with op.batch_alter_table('wallet_accounts', schema=None) as batch_op:
        batch_op.create_index('ix_wallet_accounts_org_address', ['organization_id', 'address'], unique=False)
        batch_op.create_index(batch_op.f('ix_wallet_accounts_organization_id'), ['organization_id'], unique=False)
        batch_op.create_index('ix_wallet_accounts_wallet_created', ['wallet_id', 'created_at'], unique=False)

    op.create_table('private_keys',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('curve', sa.String(length=32), nullable=False),
    sa.Column('public_key', sa.String(length=160), nullable=False),
    sa.Column('addresses', sa.JSON(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('wrapped_key', sa.Text(), nullable=False),
    sa.Column('ciphertext', sa.Text(), nullable=False),
    sa.Column('imported', sa.Boolean(), nullable=False),
    sa.Column('exported', sa.Boolean(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    *_ts(),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_private_keys_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_private_keys'))
    )
    with op.batch_alter_table('private_keys', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_private_keys_organization_id'), ['organization_id'], unique=False)

    op.create_table('private_key_addresses',
    sa.Column('private_key_id', sa.String(length=36), nullable=False),
    sa.Column('address_format', sa.String(length=64), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('address', sa.String(length=256), nullable=False),
    sa.ForeignKeyConstraint(['private_key_id'], ['private_keys.id'], name=op.f('fk_private_key_addresses_private_key_id_private_keys'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('private_key_id', 'address_format', name=op.f('pk_private_key_addresses'))
    )
    with op.batch_alter_table('private_key_addresses', schema=None) as batch_op:
        batch_op.create_index('ix_private_key_addresses_org_address', ['organization_id', 'address'], unique=False)

    op.create_table('import_targets',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('public_key', sa.String(length=160), nullable=False),
    sa.Column('wrapped_key', sa.Text(), nullable=False),
    sa.Column('ciphertext', sa.Text(), nullable=False),
    *_ts(),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_import_targets_organization_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_import_targets_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_import_targets'))
    )
    with op.batch_alter_table('import_targets', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_import_targets_organization_id'), ['organization_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_import_targets_user_id'), ['user_id'], unique=False)

    op.create_table('service_keys',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('public_key', sa.String(length=160), nullable=False),
    sa.Column('wrapped_key', sa.Text(), nullable=False),
    sa.Column('ciphertext', sa.Text(), nullable=False),
    *_ts(),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_service_keys'))
    )


def downgrade() -> None:
    op.drop_table('service_keys')
    op.drop_table('import_targets')
    op.drop_table('private_key_addresses')
    op.drop_table('private_keys')
    op.drop_table('wallet_accounts')
    op.drop_table('wallets')
