"""identity: credentials unique per organization

API keys (public key), passkeys (credential id) and OAuth providers (issuer, audience,
subject) are unique within an organization. The handlers already refuse duplicates; these
unique indexes close the race between two concurrent activities. The API-key and passkey
lookup indexes become the unique ones (same columns, same order).

Revision ID: 0006_identity_unique
Revises: 0003_identity
Create Date: 2026-11-23 08:20:00
"""
from alembic import op
import sqlalchemy as sa


revision = '0006_identity_unique'
down_revision = '0003_identity'
branch_labels = None
depends_on = None

DUPLICATES = {
    'api_keys': ('organization_id', 'public_key'),
    'authenticators': ('organization_id', 'credential_id'),
    'oauth_providers': ('organization_id', 'issuer', 'audience', 'subject'),
}


def _refuse_duplicates() -> None:
    """Stop with a clear message rather than an index error if duplicates already exist."""
    connection = op.get_bind()
    for table, columns in DUPLICATES.items():
        cols = ', '.join(columns)
        found = connection.execute(sa.text(
            f'SELECT {cols} FROM {table} GROUP BY {cols} HAVING COUNT(*) > 1 LIMIT 1')).first()
        if found is not None:
            raise RuntimeError(
                f'{table} holds duplicate credentials ({cols} = {tuple(found)}); delete the '
                f'extra rows (delete_api_keys / delete_authenticators / delete_oauth_providers) '
                f'and run walletd migrate again')


def upgrade() -> None:
    _refuse_duplicates()
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index('ix_api_keys_public_key_org')
        batch_op.create_index('uq_api_keys_public_key_org', ['public_key', 'organization_id'],
                              unique=True)
    with op.batch_alter_table('authenticators', schema=None) as batch_op:
        batch_op.drop_index('ix_authenticators_credential_id_org')
        batch_op.create_index('uq_authenticators_credential_id_org',
                              ['credential_id', 'organization_id'], unique=True)
    with op.batch_alter_table('oauth_providers', schema=None) as batch_op:
        batch_op.create_index('uq_oauth_providers_identity',
                              ['organization_id', 'issuer', 'audience', 'subject'], unique=True)


def downgrade() -> None:
    with op.batch_alter_table('oauth_providers', schema=None) as batch_op:
        batch_op.drop_index('uq_oauth_providers_identity')
    with op.batch_alter_table('authenticators', schema=None) as batch_op:
        batch_op.drop_index('uq_authenticators_credential_id_org')
        batch_op.create_index('ix_authenticators_credential_id_org',
                              ['credential_id', 'organization_id'], unique=False)
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index('uq_api_keys_public_key_org')
        batch_op.create_index('ix_api_keys_public_key_org', ['public_key', 'organization_id'],
                              unique=False)
