"""Seal events are leaves of the audit log, each once (issue 22: "seal events when they exist").

The seal operations run as an operator runs them (``infra.seal.operations``, what ``walletd
operator`` calls), on a data dir whose database is a fresh PostgreSQL one; the recorder is the
consensus worker's (``infra.audit.seal_events.SealEventRecorder``), two of them at once as
two consensus workers would be.
"""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from infra.audit.seal_events import SealEventRecorder
from infra.bootstrap import bootstrap
from infra.db.migrate import upgrade
from infra.db.models.audit import AuditStaged
from infra.seal import operations
from infra.seal.wiring import seal_config
from infra.settings import Settings


def _staged(services: object) -> list[dict]:
    with services.session_factory() as session:  # type: ignore[attr-defined]
        return [json.loads(d) for d in session.scalars(select(AuditStaged.entry).order_by(AuditStaged.id))]


def test_each_seal_event_is_one_leaf_with_public_details_only(fresh_pg_url: str,
                                                              tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = {"WALLETD_DATA_DIR": str(data), "WALLETD_DATABASE_URL": fresh_pg_url,
           "WALLETD_SEAL": "shamir"}
    settings = Settings.from_env(env)
    config = seal_config(settings)
    # ``walletd operator init`` runs before the first migration: no database is needed.
    init = operations.initialise(config, "shamir", count=5, threshold=3)
    upgrade(fresh_pg_url)
    services = bootstrap(settings, "cli")
    first, second = (SealEventRecorder(config.keyring_file, services.uow) for _ in range(2))

    assert first() == 1  # SEAL_INITIALISED
    assert first() == 0 and second() == 0  # recorded once, whoever looks
    rekeyed = operations.rekey(config, init.shares[1:4], 3, 2)
    assert operations.rotate_root(config, rekeyed.shares[:2]) == 2
    assert second() == 2 and first() == 0

    events = [leaf for leaf in _staged(services) if leaf.get("kind") == "key"
              and leaf["event"] in ("SEAL_INITIALISED", "SEAL_REKEYED", "ROOT_KEY_ROTATED")]
    assert [leaf["event"] for leaf in events] == ["SEAL_INITIALISED", "SEAL_REKEYED",
                                                 "ROOT_KEY_ROTATED"]
    assert events[0]["details"]["sealType"] == "shamir"
    assert (events[0]["details"]["threshold"], events[0]["details"]["shares"]) == (3, 5)
    assert (events[1]["details"]["threshold"], events[1]["details"]["shares"]) == (2, 3)
    assert events[2]["details"]["rootKeyVersion"] == 2
    assert len({leaf["details"]["id"] for leaf in events}) == 3
    # No secret reaches the log: no share, no wrapped root, no keyring ciphertext.
    text = json.dumps(events)
    keyring = json.loads(Path(config.keyring_file).read_text())
    for secret in [*init.shares, *rekeyed.shares, keyring["wrapped_root"], keyring["keyring"]]:
        assert secret not in text

