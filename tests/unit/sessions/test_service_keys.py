"""Service login keys: created by the first worker, published, rotated with overlap."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import falcon.testing
import pytest

from infra.bootstrap import Services, bootstrap
from infra.crypto import hpke
from infra.db.migrate import upgrade
from infra.db.models.wallets import ServiceKey
from infra.errors import InvalidRequest
from infra.seal.wiring import seal_of
from infra.sessions.service_keys import (
    ENCRYPTION,
    NOTARIZER,
    PUBLIC_CACHE,
    PURPOSES,
    VERIFICATION_TOKEN,
    public_versions,
    retire_version,
    verifying_keys,
)
from infra.settings import Settings
from infra.wallets.custody import rewrap_all
from infra.worker_services import WorkerServices, custody_of, service_keys
from ingress.app import create_app

PATH = "/public/v1/discovery/keys"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path)})
    upgrade(settings.effective_database_url)
    PUBLIC_CACHE.clear()
    return settings


@pytest.fixture
def worker(settings: Settings) -> Iterator[Services]:
    services = bootstrap(settings, "worker")
    try:
        yield services
    finally:
        services.engine.dispose()


def test_the_ingress_holds_no_service_key_material(settings: Settings) -> None:
    services = bootstrap(settings, "ingress")
    try:
        assert not isinstance(services, WorkerServices)
        with pytest.raises(Exception, match="not available"):
            service_keys(services)
    finally:
        services.engine.dispose()


def test_discovery_publishes_every_key_once_a_worker_created_them(settings: Settings) -> None:
    ingress = bootstrap(settings, "ingress")
    try:
        client = falcon.testing.TestClient(create_app(ingress))
        assert client.simulate_get(PATH).status_code == 503
        bootstrap(settings, "worker").engine.dispose()
        PUBLIC_CACHE.clear()
        body = client.simulate_get(PATH).json
        names = ("signerPublicKey", "notarizerPublicKey", "verificationTokenPublicKey",
                 "encryptionPublicKey")
        for name in names:
            assert body[name].startswith("04") and len(body[name]) == 130
            hpke.load_public_key(body[name])
        assert len({body[n] for n in names}) == 4
    finally:
        ingress.engine.dispose()


def test_private_halves_are_sealed_and_match_the_published_key(worker: Services) -> None:
    keys = service_keys(worker)
    with worker.session_factory() as session:
        for purpose in PURPOSES:
            row = session.get(ServiceKey, f"{purpose}.v1")
            assert row is not None
            pair = keys.current(session, purpose)
            secret = hpke.private_key_to_bytes(pair.private_key)
            assert secret.hex() not in row.ciphertext and secret.hex() not in row.wrapped_key
            assert pair.public_key_hex == row.public_key


def test_rotation_overlaps_until_the_old_version_is_retired(worker: Services) -> None:
    keys = service_keys(worker)
    with worker.session_factory() as session:
        old = keys.current(session, NOTARIZER)
        assert keys.add_version(session, NOTARIZER) == 2
        new = keys.current(session, NOTARIZER)
        assert new.version == 2 and new.public_key_hex != old.public_key_hex
        assert [k.public_key_hex for k in keys.live(session, NOTARIZER)] == [
            new.public_key_hex, old.public_key_hex]
        assert len(verifying_keys(session, NOTARIZER)) == 2
        with pytest.raises(InvalidRequest, match="current"):
            retire_version(session, NOTARIZER, 2)
        retire_version(session, NOTARIZER, 1)
        assert [v.version for v in public_versions(session, NOTARIZER)] == [2]
        # Other purposes are untouched.
        assert [v.version for v in public_versions(session, ENCRYPTION)] == [1]
        assert [v.version for v in public_versions(session, VERIFICATION_TOKEN)] == [1]


def test_master_key_rotation_rewraps_service_keys(worker: Services) -> None:
    custody = custody_of(worker)
    with worker.session_factory() as session:
        before = session.get(ServiceKey, "notarizer.v1")
        assert before is not None
        wrapped = before.wrapped_key
        seal_of(worker).update(lambda c: replace(c, master=c.master.with_new_version()))
        assert rewrap_all(session, custody) >= 4
        session.commit()
        after = session.get(ServiceKey, "notarizer.v1")
        assert after is not None and after.wrapped_key != wrapped
        assert custody.open_row(after)


def test_walletd_keys_service_commands(settings: Settings, worker: Services,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from walletd import keys as keys_cli

    def run(*argv: str) -> int:
        parser = argparse.ArgumentParser()
        keys_cli.configure(parser)
        return keys_cli.run(parser.parse_args(list(argv)), settings)

    assert run("service-rotate", "encryption") == 0
    assert "encryption version 2 is current" in capsys.readouterr().out
    assert run("status") == 0
    assert "service key encryption: v2 (current), v1" in capsys.readouterr().out
    assert run("service-retire", "encryption", "2") == 1
    assert "rotate first" in capsys.readouterr().err
    assert run("service-retire", "encryption", "1") == 0
    PUBLIC_CACHE.clear()
    with worker.session_factory() as session:
        assert [v.version for v in public_versions(session, ENCRYPTION)] == [2]
