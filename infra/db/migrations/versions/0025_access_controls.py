"""access controls: IP allow-lists, session profiles, MFA policies and progress

Revision ID: 0025_access_controls
Revises: 0024_webhook_delivery
Create Date: 2026-11-26 05:50:00.000000
"""
from alembic import op
import sqlalchemy as sa

from infra.db.triggers import create_user_view_triggers


revision = '0025_access_controls'
down_revision = '0024_webhook_delivery'
branch_labels = None
depends_on = None

#: PostgreSQL: every change to an allow-list or an MFA policy is announced to every process
#: (payload: the organization id), so their per-process caches forget it.
_NOTIFY = """
CREATE OR REPLACE FUNCTION walletd_access_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('walletd_access_changed',
                    COALESCE(NEW.organization_id, OLD.organization_id));
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

#: An activity waiting for MFA is settled for the request that waits on it (it answers), as
#: CONSENSUS_NEEDED is: the settle announcement (0007_pipeline) learns the new status.
_SETTLED = """
CREATE OR REPLACE FUNCTION walletd_activity_settled() RETURNS trigger AS $$
BEGIN
    IF NEW.status IN ({statuses})
       AND NEW.status IS DISTINCT FROM OLD.status THEN
        PERFORM pg_notify('walletd_activity_settled', NEW.id);
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
_BEFORE = ("'ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_FAILED', 'ACTIVITY_STATUS_REJECTED', "
           "'ACTIVITY_STATUS_CONSENSUS_NEEDED'")
_AFTER = _BEFORE + ", 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'"


def upgrade() -> None:
    op.create_table('ip_allowlists',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('public_key', sa.String(length=160), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=True),
    sa.Column('on_evaluation_error', sa.String(length=8), nullable=False),
    sa.Column('rules', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_ip_allowlists_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ip_allowlists'))
    )
    op.create_index('uq_ip_allowlists_organization_key', 'ip_allowlists', ['organization_id', 'public_key'], unique=True)
    op.create_table('session_profiles',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('scope', sa.Text(), nullable=False),
    sa.Column('expiration_seconds', sa.BigInteger(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_session_profiles_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_session_profiles'))
    )
    op.create_index(op.f('ix_session_profiles_organization_id'), 'session_profiles', ['organization_id'], unique=False)
    op.create_table('mfa_policies',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('condition', sa.Text(), nullable=False),
    sa.Column('required_methods', sa.JSON(), nullable=False),
    sa.Column('order', sa.Integer(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_mfa_policies_organization_id_organizations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_mfa_policies_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_mfa_policies'))
    )
    op.create_index(op.f('ix_mfa_policies_organization_id'), 'mfa_policies', ['organization_id'], unique=False)
    op.create_index(op.f('ix_mfa_policies_user_id'), 'mfa_policies', ['user_id'], unique=False)
    op.create_table('mfa_progress',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('activity_id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('mfa_policy_id', sa.String(length=36), nullable=False),
    sa.Column('step', sa.Integer(), nullable=False),
    sa.Column('method_type', sa.String(length=64), nullable=False),
    sa.Column('method_id', sa.String(length=160), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['activity_id'], ['activities.id'], name=op.f('fk_mfa_progress_activity_id_activities'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_mfa_progress'))
    )
    op.create_index(op.f('ix_mfa_progress_activity_id'), 'mfa_progress', ['activity_id'], unique=False)
    op.create_index('uq_mfa_progress_step', 'mfa_progress', ['activity_id', 'user_id', 'step'], unique=True)
    with op.batch_alter_table('api_keys') as batch:
        batch.add_column(sa.Column('session_profile_id', sa.String(length=36), nullable=True))
    # v1User shows mfaPolicies: writes to them move users.view_version (infra.db.triggers).
    create_user_view_triggers(op.get_bind(), ['mfa_policies'])
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(_NOTIFY)
        op.execute(_SETTLED.format(statuses=_AFTER))
        for table in ('ip_allowlists', 'mfa_policies'):
            op.execute(f"CREATE TRIGGER {table}_access_changed AFTER INSERT OR UPDATE OR DELETE "
                       f"ON {table} FOR EACH ROW EXECUTE FUNCTION walletd_access_changed()")


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        for table in ('ip_allowlists', 'mfa_policies'):
            op.execute(f"DROP TRIGGER IF EXISTS {table}_access_changed ON {table}")
        op.execute("DROP FUNCTION IF EXISTS walletd_access_changed()")
        op.execute(_SETTLED.format(statuses=_BEFORE))
    with op.batch_alter_table('api_keys') as batch:
        batch.drop_column('session_profile_id')
    op.drop_table('mfa_progress')
    if op.get_bind().dialect.name == 'postgresql':
        op.execute("DROP TRIGGER IF EXISTS mfa_policies_user_view ON mfa_policies")
    op.drop_table('mfa_policies')
    op.drop_table('session_profiles')
    op.drop_table('ip_allowlists')
