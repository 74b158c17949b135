"""trust: identities count for logins only once proven

Adds when each contact, OIDC identity and login key was proven (``infra.identity.verified``).
Existing rows of sub-organizations are unverified — stored, never used to find a user — unless
the sub-organization was created by a token-checked sign-up: the verification token that
served the sign-up marks the contact it was issued for, an OIDC token spent by a sign-up marks
that user's OAuth providers, and the keys of such a sub-organization are its login keys. Rows
of top-level organizations (the operator's own users) are verified. An operator re-vouches
for an older sub-organization's contact by setting it again (``update_user_email`` /
``update_user_phone_number``) with its own credential.

Revision ID: 0020_verified_identities
Revises: 0013_one_head
Create Date: 2026-11-26 05:40:00
"""
import json

from alembic import op
import sqlalchemy as sa


revision = '0020_verified_identities'
down_revision = '0013_one_head'
branch_labels = None
depends_on = None

_DT = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email_verified_at', _DT, nullable=True))
        batch_op.add_column(sa.Column('phone_verified_at', _DT, nullable=True))
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.add_column(sa.Column('login_verified_at', _DT, nullable=True))
    with op.batch_alter_table('oauth_providers', schema=None) as batch_op:
        batch_op.add_column(sa.Column('verified_at', _DT, nullable=True))
        batch_op.add_column(sa.Column('proof', sa.String(length=16), nullable=True))
    with op.batch_alter_table('otp_codes', schema=None) as batch_op:
        # Codes per contact across organizations (infra.sessions.channels.check_rate).
        batch_op.create_index('ix_otp_codes_contact_created', ['contact', 'created_at'],
                              unique=False)
    _mark_existing()


def _mark_existing() -> None:
    bind = op.get_bind()
    top = sa.text('SELECT id FROM organizations WHERE parent_id IS NULL')
    # The operator's own organizations: what is there was put there by the operator.
    bind.execute(sa.text(
        'UPDATE users SET email_verified_at = created_at WHERE email IS NOT NULL '
        f'AND organization_id IN ({top.text})'))
    bind.execute(sa.text(
        'UPDATE users SET phone_verified_at = created_at WHERE phone_number IS NOT NULL '
        f'AND organization_id IN ({top.text})'))
    bind.execute(sa.text(
        f'UPDATE api_keys SET login_verified_at = created_at WHERE organization_id IN ({top.text})'))
    bind.execute(sa.text(
        "UPDATE oauth_providers SET verified_at = created_at, proof = 'operator' "
        f'WHERE organization_id IN ({top.text})'))
    # Token-checked sign-ups: the token's contact, in the sub-organization it created.
    tokens = bind.execute(sa.text(
        'SELECT t.verification_type, t.contact, t.signup_used_at, a.result '
        'FROM verification_tokens t JOIN activities a '
        'ON a.fingerprint = t.signup_fingerprint '
        "WHERE t.signup_used_at IS NOT NULL AND a.status = 'ACTIVITY_STATUS_COMPLETED' "
        "AND a.type LIKE 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION%'")).all()
    for verification_type, contact, used_at, result in tokens:
        sub_org = _sub_organization_id(result)
        if not sub_org:
            continue
        if verification_type == 'OTP_TYPE_SMS':
            bind.execute(sa.text(
                'UPDATE users SET phone_verified_at = :at WHERE organization_id = :org '
                'AND phone_number = :contact'), {'at': used_at, 'org': sub_org, 'contact': contact})
        else:
            bind.execute(sa.text(
                'UPDATE users SET email_verified_at = :at WHERE organization_id = :org '
                'AND lower(email) = :contact'),
                {'at': used_at, 'org': sub_org, 'contact': str(contact).strip().lower()})
        bind.execute(sa.text(
            'UPDATE api_keys SET login_verified_at = :at WHERE organization_id = :org'),
            {'at': used_at, 'org': sub_org})
    # OIDC tokens spent by a sign-up: ``signup:<organization>:<user>``.
    uses = bind.execute(sa.text(
        "SELECT fingerprint, used_at FROM oidc_token_uses WHERE usage = 'signup' "
        "AND fingerprint LIKE 'signup:%'")).all()
    for fingerprint, used_at in uses:
        parts = str(fingerprint).split(':')
        if len(parts) != 3:
            continue
        bind.execute(sa.text(
            "UPDATE oauth_providers SET verified_at = :at, proof = 'oidc_token' "
            'WHERE organization_id = :org AND user_id = :user AND verified_at IS NULL'),
            {'at': used_at, 'org': parts[1], 'user': parts[2]})


def _sub_organization_id(result: object) -> str:
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return ''
    if not isinstance(result, dict):
        return ''
    for body in result.values():
        if isinstance(body, dict) and isinstance(body.get('subOrganizationId'), str):
            return str(body['subOrganizationId'])
    return ''


def downgrade() -> None:
    # Plain DROP COLUMN (PostgreSQL; SQLite 3.35+): a batch copy of ``users`` would break the
    # triggers that name it (``infra.db.triggers``).
    op.drop_index('ix_otp_codes_contact_created', table_name='otp_codes')
    for table, column in (('oauth_providers', 'proof'), ('oauth_providers', 'verified_at'),
                          ('api_keys', 'login_verified_at'), ('users', 'phone_verified_at'),
                          ('users', 'email_verified_at')):
        op.execute(f'ALTER TABLE {table} DROP COLUMN {column}')
