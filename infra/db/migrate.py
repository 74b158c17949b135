"""Run Alembic migrations programmatically (``walletd migrate``).

Each concept's migrations form their own branch off the foundation revision, so
``upgrade("heads")`` applies all of them; see docs/DEVELOPING.md.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from infra.db.engine import normalize_url

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at our migrations and ``url``."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return cfg


def upgrade(url: str, target: str = "heads") -> None:
    """Bring the database at ``url`` up to date."""
    command.upgrade(alembic_config(url), target)


def revision(url: str, message: str, rev_id: str, head: str = "foundation@head",
             branch_label: str | None = None) -> None:
    """Autogenerate a new revision (a development helper)."""
    command.revision(alembic_config(url), message=message, autogenerate=True, rev_id=rev_id,
                     head=head, branch_label=branch_label)
