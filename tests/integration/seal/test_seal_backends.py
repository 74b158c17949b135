"""Every seal type on its real backend: OpenBao transit, SoftHSM2 (PKCS#11), moto's AWS KMS.

Faults: the backend down at start (sealed, says why, signs nothing, unseals itself when it
returns), a tampered sealed keyring, a wrong PIN or token, another deployment's key; root-key
rotation and master-key rotation with rewrap; the migration static → shamir → transit →
pkcs11 → awskms with a signature made and verified at every step.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import coincurve
import pytest

from infra.crypto.envelope import EnvelopeCipher
from infra.db.models.wallets import PrivateKey
from infra.seal import operations, sealed_file
from infra.seal.config import SealConfig
from infra.seal.errors import Sealed
from infra.seal.holders import custody_of_seal
from infra.seal.sealed_file import Contents
from infra.seal.state import SealState
from tests.support.seal_servers import (
    Kms,
    Relay,
    Token,
    Transit,
    moto_kms,
    openbao,
    softhsm_token,
)


def _config(tmp_path: Path, env: dict[str, str]) -> SealConfig:
    return SealConfig.from_env(env, tmp_path, str(tmp_path / "keyring.sealed"))


def _wait_unsealed(state: SealState, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while state.sealed and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not state.sealed, state.reason


@pytest.fixture
def transit(tmp_path: Path) -> Iterator[Transit]:
    with openbao(tmp_path / "bao") as server:
        yield server


@pytest.fixture
def kms() -> Iterator[Kms]:
    with moto_kms() as server:
        yield server


@pytest.fixture
def token(tmp_path: Path) -> Token:
    return softhsm_token(tmp_path / "hsm")


def _signing_key_row(state: SealState) -> tuple[PrivateKey, bytes]:
    """A private-key row sealed by ``state``'s custody, and its public key."""
    custody = custody_of_seal(state)
    secret = coincurve.PrivateKey()
    row = PrivateKey(id="pk-seal", organization_id="o", name="k")
    custody.seal_row(row, secret.secret)
    return row, secret.public_key.format()


def _signs(state: SealState, row: PrivateKey, public: bytes) -> None:
    """Open the row through the seal, sign, verify with the public key."""
    message = b"signed across seals"
    secret = custody_of_seal(state).open_row(row)
    signature = coincurve.PrivateKey(secret).sign(message)
    assert coincurve.PublicKey(public).verify(signature, message)


@pytest.mark.parametrize("backend", ["transit", "pkcs11", "awskms", "static"])
def test_each_auto_seal_unseals_at_start_and_hands_out_recovery_shares(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    env = {"WALLETD_SEAL": backend}
    if backend != "static":
        server = request.getfixturevalue({"transit": "transit", "pkcs11": "token",
                                          "awskms": "kms"}[backend])
        env = server.env()
    config = _config(tmp_path, env)
    outcome = operations.initialise(config, backend)
    assert outcome.recovery == (backend != "static")
    assert len(outcome.shares) == (0 if backend == "static" else 5)
    text = Path(config.keyring_file).read_text()
    assert json.loads(text)["seal"]["type"] == backend
    state = SealState(config)
    assert state.try_auto_unseal(), state.reason
    assert state.contents().master.current == 1
    if backend != "static":  # recovery shares authorise, they decrypt nothing
        current = operations.current_file(config)
        root = operations.authorise(config, current, outcome.shares[:3])
        assert root == state.root_for_operator()[0]
        assert Path(config.static_key_file).exists() is False


def _wait_stopped(pid: int, timeout_s: float = 10.0) -> None:
    """Return once every thread of ``pid`` is stopped: ``kill`` returns before a busy
    multi-threaded server has taken SIGSTOP everywhere, and one thread still running may
    answer a request."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
            except (FileNotFoundError, ProcessLookupError):
                continue
        if states and all(state in ("T", "t") for state in states):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not stop")


def test_transit_down_at_start_stays_sealed_then_unseals_itself(
        transit: Transit, tmp_path: Path) -> None:
    config = _config(tmp_path, transit.env())
    operations.initialise(config, "transit")
    os.kill(transit.server.pid, signal.SIGSTOP)
    try:
        _wait_stopped(transit.server.pid)
        state = SealState(config)
        state.start()
        assert state.sealed and "unreachable" in state.reason
        with pytest.raises(Sealed, match="sealed"):
            custody_of_seal(state).keyring  # noqa: B018 (signs nothing)
    finally:
        os.kill(transit.server.pid, signal.SIGCONT)
    _wait_unsealed(state)
    state.stop()


def test_a_transit_token_without_rights_says_so(transit: Transit, tmp_path: Path) -> None:
    config = _config(tmp_path, transit.env())
    operations.initialise(config, "transit")
    state = SealState(replace(config, transit_token="not-a-token"))
    assert not state.try_auto_unseal()
    assert "refused the token" in state.reason


def test_kms_down_at_start_stays_sealed_then_unseals_itself(kms: Kms, tmp_path: Path) -> None:
    relay = Relay(int(kms.endpoint.rsplit(":", 1)[1]))
    relay.up()
    config = _config(tmp_path, {**kms.env(), "WALLETD_SEAL_AWSKMS_ENDPOINT": relay.url})
    operations.initialise(config, "awskms")
    relay.down()
    state = SealState(config)
    state.start()
    assert state.sealed and "AWS KMS" in state.reason
    with pytest.raises(Sealed):
        state.contents()
    relay.up()
    try:
        _wait_unsealed(state)
    finally:
        state.stop()
        relay.down()


def test_kms_refuses_another_deployments_context(kms: Kms, tmp_path: Path) -> None:
    config = _config(tmp_path, kms.env())
    operations.initialise(config, "awskms")
    state = SealState(replace(config, awskms_context="another-deployment"))
    assert not state.try_auto_unseal() and "refused" in state.reason


def test_wrong_pin_or_token_keeps_the_seal_closed(token: Token, tmp_path: Path) -> None:
    config = _config(tmp_path, token.env())
    operations.initialise(config, "pkcs11")
    assert SealState(config).try_auto_unseal()
    wrong_pin = SealState(replace(config, pkcs11_pin="0000"))
    assert not wrong_pin.try_auto_unseal() and "PinIncorrect" in wrong_pin.reason
    wrong_token = SealState(replace(config, pkcs11_token_label="nope"))
    assert not wrong_token.try_auto_unseal() and "cannot be used" in wrong_token.reason
    other = softhsm_token(tmp_path / "hsm2", label="other")
    wrong_key = SealState(replace(config, pkcs11_token_label=other.label))
    assert not wrong_key.try_auto_unseal() and "does not unwrap" in wrong_key.reason


def test_a_tampered_sealed_keyring_stays_sealed(tmp_path: Path) -> None:
    config = _config(tmp_path, {"WALLETD_SEAL": "static"})
    operations.initialise(config, "static")
    path = Path(config.keyring_file)
    doc = json.loads(path.read_text())
    blob = sealed_file.unb64u(doc["keyring"])
    doc["keyring"] = sealed_file.b64u(blob[:40] + bytes([blob[40] ^ 1]) + blob[41:])
    path.write_text(json.dumps(doc))
    state = SealState(config)
    assert not state.try_auto_unseal() and "tampered" in state.reason
    doc2 = json.loads(path.read_text())
    doc2["wrapped_root"] = doc2["wrapped_root"][:-4] + "AAAA"
    path.write_text(json.dumps(doc2))
    assert not SealState(config).try_auto_unseal()


def test_root_rotation_and_master_rotation_with_rewrap(transit: Transit, tmp_path: Path) -> None:
    config = _config(tmp_path, transit.env())
    operations.initialise(config, "transit")
    worker = SealState(config)
    assert worker.try_auto_unseal()
    row, public = _signing_key_row(worker)
    old_root = worker.root_for_operator()[0]
    assert operations.rotate_root(config, []) == 2
    worker.force_reload()  # what a running worker does when the file changes
    assert worker.root_for_operator()[0] != old_root
    _signs(worker, row, public)
    worker.update(lambda c: replace(c, master=c.master.with_new_version()))
    custody = custody_of_seal(worker)
    assert custody.rewrap_row(row) and row.wrapped_key.startswith("wk1.2.")
    _signs(worker, row, public)
    fresh = SealState(config)
    assert fresh.try_auto_unseal() and fresh.contents().master.current == 2
    _signs(fresh, row, public)


def test_migration_static_shamir_transit_pkcs11_awskms_keeps_every_key(
        transit: Transit, token: Token, kms: Kms, tmp_path: Path) -> None:
    env = {**transit.env(), **token.env(), **kms.env(), "WALLETD_SEAL": ""}
    config = _config(tmp_path, env)
    outcome = operations.initialise(config, "static")
    state = SealState(config)
    assert state.try_auto_unseal()
    row, public = _signing_key_row(state)
    before: Contents = state.contents()
    # static hands out no shares (development only: whoever has the data dir has its key)
    assert outcome.shares == [] and operations.current_file(config).recovery is None
    unseal = operations.migrate(config, "shamir", [], 5, 3)
    assert len(unseal.shares) == 5 and not unseal.recovery
    shamir = SealState(config)
    for share in unseal.shares[1:4]:
        shamir.submit_share(share)
    _signs(shamir, row, public)
    to_transit = operations.migrate(config, "transit", unseal.shares[:3], 5, 3)
    assert to_transit.recovery and len(to_transit.shares) == 5
    for kind in ("pkcs11", "awskms"):
        operations.migrate(config, kind, to_transit.shares[2:], 5, 3)
        moved = SealState(config)
        assert moved.try_auto_unseal(), moved.reason
        assert moved.contents().to_bytes() == before.to_bytes()
        _signs(moved, row, public)
    assert EnvelopeCipher(before.master).needs_rewrap(row.wrapped_key) is False

