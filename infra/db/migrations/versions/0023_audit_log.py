"""audit log: staged leaves, leaves, perfect-subtree nodes, checkpoints, app proofs, boots

Revision ID: 0023_audit_log
Revises: 0013_one_head
Create Date: 2026-11-26 05:40:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0023_audit_log'
down_revision = '0013_one_head'
branch_labels = None
depends_on = None

BIG = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('audit_staged',
    sa.Column('id', BIG, autoincrement=True, nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=True),
    sa.Column('activity_id', sa.String(length=36), nullable=True),
    sa.Column('entry', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_staged'))
    )
    op.create_table('audit_leaves',
    sa.Column('idx', BIG, autoincrement=False, nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=True),
    sa.Column('activity_id', sa.String(length=36), nullable=True),
    sa.Column('data', sa.Text(), nullable=False),
    sa.Column('hash', sa.LargeBinary(length=32), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('idx', name=op.f('pk_audit_leaves'))
    )
    op.create_index('ix_audit_leaves_activity', 'audit_leaves', ['activity_id', 'idx'])
    op.create_index('ix_audit_leaves_organization', 'audit_leaves', ['organization_id', 'idx'])
    op.create_table('audit_nodes',
    sa.Column('level', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('idx', BIG, autoincrement=False, nullable=False),
    sa.Column('hash', sa.LargeBinary(length=32), nullable=False),
    sa.PrimaryKeyConstraint('level', 'idx', name=op.f('pk_audit_nodes'))
    )
    op.create_table('audit_state',
    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('size', BIG, nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_state'))
    )
    op.execute("INSERT INTO audit_state (id, size) VALUES (1, 0)")
    op.create_table('audit_checkpoints',
    sa.Column('size', BIG, autoincrement=False, nullable=False),
    sa.Column('root', sa.LargeBinary(length=32), nullable=False),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('size', name=op.f('pk_audit_checkpoints'))
    )
    op.create_table('audit_app_proofs',
    sa.Column('id', BIG, autoincrement=True, nullable=False),
    sa.Column('organization_id', sa.String(length=36), nullable=False),
    sa.Column('activity_id', sa.String(length=36), nullable=False),
    sa.Column('proof', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_app_proofs'))
    )
    op.create_index(op.f('ix_audit_app_proofs_activity_id'), 'audit_app_proofs', ['activity_id'])
    op.create_table('audit_boots',
    sa.Column('public_key', sa.String(length=264), nullable=False),
    sa.Column('record', sa.Text(), nullable=False),
    sa.Column('signature', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('public_key', name=op.f('pk_audit_boots'))
    )


def downgrade() -> None:
    op.drop_table('audit_boots')
    op.drop_index(op.f('ix_audit_app_proofs_activity_id'), table_name='audit_app_proofs')
    op.drop_table('audit_app_proofs')
    op.drop_table('audit_checkpoints')
    op.drop_table('audit_state')
    op.drop_table('audit_nodes')
    op.drop_index('ix_audit_leaves_organization', table_name='audit_leaves')
    op.drop_index('ix_audit_leaves_activity', table_name='audit_leaves')
    op.drop_table('audit_leaves')
    op.drop_table('audit_staged')
