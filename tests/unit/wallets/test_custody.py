"""Key custody: only worker-type roles open the keyring, and only through the seal."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from infra.bootstrap import bootstrap
from infra.crypto.keyring import KEYRING_FILENAME, KeyringUnavailable, init_keyring_file
from infra.db.models.wallets import Wallet
from infra.errors import Internal
from infra.seal import state as seal_state
from infra.seal.errors import Sealed
from infra.seal.holders import custody_of_seal
from infra.seal.wiring import build_state
from infra.settings import Settings
from infra.wallets.custody import load_custody, row_context
from infra.worker_services import WorkerServices, custody_of


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path)})


def _custody(settings: Settings):  # type: ignore[no-untyped-def]
    state = build_state(settings)
    state.try_auto_unseal()
    return custody_of_seal(state), state


def test_ingress_settings_carry_no_master_key_location_nor_seal_secrets(tmp_path: Path) -> None:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path), "WALLETD_SEAL": "transit",
                                  "WALLETD_SEAL_TRANSIT_TOKEN": "t"})
    assert Path(settings.master_key_file).name == KEYRING_FILENAME
    assert dict(settings.seal_env)["WALLETD_SEAL_TRANSIT_TOKEN"] == "t"
    ingress = settings.for_role("ingress")
    assert ingress.master_key_file == "" and ingress.seal_env == ()


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
        assert not Path(settings.effective_keyring_file).exists()
    finally:
        services.engine.dispose()


def test_worker_process_services_open_the_keyring_through_the_seal(settings: Settings) -> None:
    services = bootstrap(settings, "worker")
    try:
        custody = custody_of(services)
        assert isinstance(services, WorkerServices) and services.custody is custody
        assert custody.keyring.current == 1
        assert Path(settings.effective_keyring_file).stat().st_mode & 0o777 == 0o600
        assert not Path(settings.master_key_file).exists()  # no key file in clear
    finally:
        services.engine.dispose()


def test_worker_refuses_a_world_readable_sealed_keyring(settings: Settings) -> None:
    _custody(settings)
    Path(settings.effective_keyring_file).chmod(0o644)
    custody, state = _custody(settings)
    assert state.sealed and "chmod 600" in state.reason
    with pytest.raises(Sealed):
        custody.keyring  # noqa: B018


def test_an_existing_plaintext_keyring_is_imported_then_removed(settings: Settings) -> None:
    old = init_keyring_file(settings.master_key_file)
    custody, _ = _custody(settings)
    assert custody.keyring.current_key().key_secret == old.current_key().key_secret
    assert not Path(settings.master_key_file).exists()


def test_sealed_rows_are_bound_to_their_row(settings: Settings) -> None:
    custody, _ = _custody(settings)
    a = Wallet(id="a", organization_id="o", name="a")
    b = Wallet(id="b", organization_id="o", name="b")
    custody.seal_row(a, b"seed words")
    assert custody.open_row(a) == b"seed words"
    assert row_context(a) == b"wallet:a"
    b.wrapped_key, b.ciphertext = a.wrapped_key, a.ciphertext
    with pytest.raises(Exception, match="could not be decrypted"):
        custody.open_row(b)


def test_rotation_in_another_process_is_picked_up_on_unknown_version(settings: Settings) -> None:
    worker, _ = _custody(settings)
    cli, cli_state = _custody(settings)
    cli_state.update(lambda c: replace(c, master=c.master.with_new_version()))
    row = Wallet(id="r", organization_id="o", name="r")
    cli.seal_row(row, b"secret")
    assert row.wrapped_key.startswith("wk1.2.")
    assert worker.open_row(row) == b"secret"  # worker re-read the sealed keyring
    assert worker.keyring.current == 2


def test_worker_wraps_new_rows_with_a_version_rotated_by_another_process(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seal_state, "RELOAD_CHECK_S", 0.0)
    worker, _ = _custody(settings)
    _, cli_state = _custody(settings)
    cli_state.update(lambda c: replace(c, master=c.master.with_new_version()))
    path = settings.effective_keyring_file
    stat = os.stat(path)
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))  # coarse clocks
    row = Wallet(id="n", organization_id="o", name="n")
    worker.seal_row(row, b"secret")
    assert row.wrapped_key.startswith("wk1.2.")
