"""policies: policies, policy evaluations

Revision ID: 0004_policies
Revises: 0001_foundation
Create Date: 2026-11-22 04:40:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0004_policies'
down_revision = '0001_foundation'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('policies',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('effect', sa.String(length=32), nullable=False),
    sa.Column('condition', sa.Text(), nullable=False),
    sa.Column('consensus', sa.Text(), nullable=False),
    sa.Column('time_expression', sa.Text(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_policies_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_policies'))
    )
    with op.batch_alter_table('policies', schema=None) as batch_op:
        batch_op.create_index('ix_policies_org_created', ['organization_id', 'created_at'], unique=False)

    op.create_table('policy_evaluations',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('activity_id', sa.String(length=36), nullable=False),
    sa.Column('vote_id', sa.String(length=36), nullable=False),
    sa.Column('outcome', sa.String(length=40), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('evaluations', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['activity_id'], ['activities.id'], name=op.f('fk_policy_evaluations_activity_id_activities'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_policy_evaluations_organization_id_organizations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_policy_evaluations'))
    )
    with op.batch_alter_table('policy_evaluations', schema=None) as batch_op:
        batch_op.create_index('ix_policy_evaluations_activity', ['activity_id', 'created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('policy_evaluations', schema=None) as batch_op:
        batch_op.drop_index('ix_policy_evaluations_activity')
    op.drop_table('policy_evaluations')
    with op.batch_alter_table('policies', schema=None) as batch_op:
        batch_op.drop_index('ix_policies_org_created')
    op.drop_table('policies')
