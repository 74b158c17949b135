"""Key custody: only worker-type roles can load the master key ring."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.bootstrap import bootstrap
from infra.crypto.keyring import KEYRING_FILENAME, KeyringUnavailable, init_keyring_file
from infra.db.models.wallets import Wallet
from infra.errors import Internal
from infra.settings import Settings
from infra.wallets.custody import load_custody, row_context
from infra.worker_services import WorkerServices, custody_of


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    base = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path)})
    init_keyring_file(base.master_key_file)
    return base


def test_ingress_settings_carry_no_master_key_location(settings: Settings) -> None:
    assert Path(settings.master_key_file).name == KEYRING_FILENAME
    assert settings.for_role("ingress").master_key_file == ""


def test_ingress_settings_cannot_load_the_master_key(settings: Settings) -> None:
    with pytest.raises(KeyringUnavailable, match="ingress"):
        load_custody(settings.for_role("ingress").master_key_file)


def test_ingress_process_services_hold_no_key_material(settings: Settings) -> None:
    services = bootstrap(settings, "ingress")
    try:
        assert not isinstance(services, WorkerServices)
        assert not {"custody", "service_keys", "webhook_keys"} & set(vars(services))
        with pytest.raises(Internal):
            custody_of(services)
    finally:
        services.engine.dispose()


def test_worker_process_services_load_the_key_ring(settings: Settings) -> None:
    services = bootstrap(settings, "worker")
    try:
        custody = custody_of(services)
        assert isinstance(services, WorkerServices) and services.custody is custody
        assert custody.keyring.current == 1
    finally:
        services.engine.dispose()


def test_worker_refuses_a_world_readable_key_ring(settings: Settings) -> None:
    Path(settings.master_key_file).chmod(0o644)
    with pytest.raises(KeyringUnavailable, match="chmod 600"):
        bootstrap(settings, "worker")


def test_worker_creates_the_key_ring_on_first_start(tmp_path: Path) -> None:
    fresh = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path / "new")})
    services = bootstrap(fresh, "worker")
    try:
        assert Path(fresh.master_key_file).stat().st_mode & 0o777 == 0o600
    finally:
        services.engine.dispose()


def test_sealed_rows_are_bound_to_their_row(settings: Settings) -> None:
    custody = load_custody(settings.master_key_file)
    a = Wallet(id="a", organization_id="o", name="a")
    b = Wallet(id="b", organization_id="o", name="b")
    custody.seal_row(a, b"seed words")
    assert custody.open_row(a) == b"seed words"
    assert row_context(a) == b"wallet:a"
    b.wrapped_key, b.ciphertext = a.wrapped_key, a.ciphertext
    with pytest.raises(Exception, match="could not be decrypted"):
        custody.open_row(b)


def test_rotation_in_another_process_is_picked_up_on_unknown_version(settings: Settings) -> None:
    from infra.crypto.keyring import rotate_keyring_file

    worker = load_custody(settings.master_key_file)
    cli = load_custody(settings.master_key_file)
    rotate_keyring_file(settings.master_key_file)
    cli.reload()
    row = Wallet(id="r", organization_id="o", name="r")
    cli.seal_row(row, b"secret")
    assert row.wrapped_key.startswith("wk1.2.")
    assert worker.open_row(row) == b"secret"  # worker re-read the ring
    assert worker.keyring.current == 2


def test_worker_wraps_new_rows_with_a_version_rotated_by_another_process(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from infra.crypto.keyring import rotate_keyring_file
    from infra.wallets import custody as custody_module

    monkeypatch.setattr(custody_module, "RELOAD_CHECK_S", 0.0)
    worker = load_custody(settings.master_key_file)
    rotate_keyring_file(settings.master_key_file)
    stat = os.stat(settings.master_key_file)
    os.utime(settings.master_key_file, (stat.st_atime, stat.st_mtime + 5))  # coarse clocks
    row = Wallet(id="n", organization_id="o", name="n")
    worker.seal_row(row, b"secret")
    assert row.wrapped_key.startswith("wk1.2.")
