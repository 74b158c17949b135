"""Write the dumps of a database migrated by landed main (commit 59e608d, ``upgrade heads``).

    .venv/bin/python -m tests.integration.db.landed_main.make_dumps

Runs the migration scripts of that commit (read with ``git show``) into a fresh SQLite file
and a fresh PostgreSQL database, adds a few rows (an organization, its root user and API key,
a wallet, a policy), and writes ``sqlite.dump`` (SQL of ``iterdump``) and ``postgresql.dump`` (SQL of
``pg_dump --inserts``) beside this file. ``test_migrations`` loads them and upgrades them
to today's head. Run once; the dumps are committed, so the test needs neither git nor pg_dump.
"""

from __future__ import annotations

import sqlite3
import subprocess
import tempfile
from pathlib import Path

from alembic import command
from alembic.config import Config

from infra.db.engine import make_engine, make_session_factory, normalize_url
from infra.db.models.policies import Policy
from infra.db.models.wallets import Wallet
from infra.identity.root import create_organization, new_p256_keypair
from tests.support import services

LANDED_MAIN = "59e608d"
HERE = Path(__file__).parent
ROOT = HERE.parents[3]
MIGRATIONS = "infra/db/migrations"


def _old_migrations(into: Path) -> Path:
    """Landed main's migrations directory, written under ``into``."""
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", LANDED_MAIN, MIGRATIONS],
                           cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    for name in names:
        target = into / Path(name).relative_to(MIGRATIONS)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(subprocess.run(["git", "show", f"{LANDED_MAIN}:{name}"], cwd=ROOT,
                                          check=True, capture_output=True).stdout)
    return into


def _migrate_and_fill(url: str, scripts: Path) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(scripts))
    cfg.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    command.upgrade(cfg, "heads")
    engine = make_engine(url, pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            org, _user = create_organization(session, "landed main", new_p256_keypair()[1])
            session.add(Wallet(organization_id=org.id, name="a wallet from landed main",
                               wrapped_key="fixture-wrapped-key", ciphertext="fixture-ciphertext"))
            session.add(Policy(organization_id=org.id, name="a policy from landed main",
                               effect="EFFECT_ALLOW", condition="true", consensus=""))
            session.commit()
    finally:
        engine.dispose()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scripts = _old_migrations(Path(tmp) / "migrations")
        path = Path(tmp) / "landed.db"
        _migrate_and_fill(f"sqlite:///{path}", scripts)
        with sqlite3.connect(path) as conn:
            (HERE / "sqlite.dump").write_text("\n".join(conn.iterdump()) + "\n")
        url = services.create_database()
        try:
            _migrate_and_fill(url, scripts)
            dump = subprocess.run(["pg_dump", "--inserts", "--no-owner", "--no-privileges",
                                   "--no-comments", url], check=True, capture_output=True,
                                  text=True).stdout
        finally:
            services.drop_database(url)
    # psql meta-commands (\restrict) cannot run through a driver; comments add nothing.
    lines = [line for line in dump.splitlines()
             if not line.startswith(("\\", "--")) and line.strip()]
    (HERE / "postgresql.dump").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
