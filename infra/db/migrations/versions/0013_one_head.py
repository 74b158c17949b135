"""one head: merge the per-concept branches into one linear chain

Until this revision each concept's migrations were a branch of their own off
``0001_foundation`` (eight heads; ``alembic upgrade head`` failed). This revision merges every
one of those heads; each later revision chains after the one before it, so the history is a
single line and ``walletd db upgrade`` / ``alembic upgrade head`` reach one head.

A database migrated with ``upgrade heads`` before this revision records the eight heads in
``alembic_version``; upgrading it applies this revision, which replaces them with one row.

Revision ID: 0013_one_head
Revises: 0002_wallets, 0004_policies, 0006_identity_unique, 0007_pipeline,
    0007_webhook_notify, 0010_sessions, 0011_oauth, 0012_auth_proxy
Create Date: 2026-11-26 05:40:00.000000
"""


revision = '0013_one_head'
down_revision = (
    '0002_wallets',
    '0004_policies',
    '0006_identity_unique',
    '0007_pipeline',
    '0007_webhook_notify',
    '0010_sessions',
    '0011_oauth',
    '0012_auth_proxy',
)
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
