"""The shamir seal: SLIP-39 shares, progress in memory, rekey; nothing of a share in a log."""

from __future__ import annotations

import itertools
import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from infra.seal import operations, sealed_file
from infra.seal.admin import AdminSocket, call_all, handle
from infra.seal.config import SealConfig
from infra.seal.errors import BadShare, Sealed
from infra.seal.state import SealState


def _config(tmp_path: Path, **kw: object) -> SealConfig:
    return replace(SealConfig(type="shamir", keyring_file=str(tmp_path / "keyring.sealed"),
                              socket_dir=str(tmp_path / "run"),
                              static_key_file=str(tmp_path / "static-seal.key")), **kw)


@pytest.fixture
def initialised(tmp_path: Path) -> tuple[SealConfig, list[str]]:
    config = _config(tmp_path)
    outcome = operations.initialise(config, "shamir", count=5, threshold=3)
    assert len(outcome.shares) == 5 and outcome.threshold == 3 and not outcome.recovery
    return config, outcome.shares


def _corrupt(share: str) -> str:
    words = share.split()
    words[5] = "academic" if words[5] != "academic" else "acid"
    return " ".join(words)


def test_every_threshold_subset_unseals_and_fewer_do_not(
        initialised: tuple[SealConfig, list[str]]) -> None:
    config, shares = initialised
    roots = set()
    for subset in itertools.combinations(shares, 3):
        state = SealState(config)
        state.try_auto_unseal()
        assert state.sealed and "waiting for unseal shares" in state.reason
        for i, share in enumerate(subset):
            status = state.submit_share(share)
            assert status["progress"] == (i + 1) % 3 and status["threshold"] == 3
            assert status["sealed"] == (i < 2)
        roots.add(state.root_for_operator()[0])
        assert state.contents().master.current == 1
    assert len(roots) == 1  # ten subsets, one root key
    for pair in itertools.combinations(shares, 2):
        state = SealState(config)
        for share in pair:
            state.submit_share(share)
        assert state.sealed and state.status()["progress"] == 2
        with pytest.raises(Sealed):
            state.contents()


def test_a_corrupted_share_or_a_share_of_another_set_is_refused(
        initialised: tuple[SealConfig, list[str]], tmp_path: Path) -> None:
    config, shares = initialised
    state = SealState(config)
    with pytest.raises(BadShare, match="checksum"):
        state.submit_share(_corrupt(shares[0]))
    assert state.status()["progress"] == 0
    state.submit_share(shares[0])
    with pytest.raises(BadShare, match="entered already"):
        state.submit_share(shares[0])
    other = operations.initialise(_config(tmp_path / "other"), "shamir", count=5, threshold=3)
    with pytest.raises(BadShare, match="another set"):
        state.submit_share(other.shares[1])
    state.submit_share(shares[1])
    state.submit_share(shares[2])
    assert not state.sealed


def test_shares_of_the_same_size_that_combine_to_another_key_do_not_unseal(
        initialised: tuple[SealConfig, list[str]], tmp_path: Path) -> None:
    config, _ = initialised
    # A set made for another deployment, presented as a whole quorum: it combines (same
    # identifier within its set) but the key it gives does not unwrap this root key.
    other = operations.initialise(_config(tmp_path / "other"), "shamir", count=5, threshold=3)
    state = SealState(config)
    state.submit_share(other.shares[0])
    state.submit_share(other.shares[1])
    with pytest.raises(BadShare, match="do not unseal"):
        state.submit_share(other.shares[2])
    assert state.sealed and state.status()["progress"] == 0


def test_progress_is_forgotten_after_the_timeout(
        initialised: tuple[SealConfig, list[str]]) -> None:
    config, shares = initialised
    state = SealState(replace(config, unseal_timeout_s=-1))  # every progress has expired
    state.submit_share(shares[0])
    assert state.status()["progress"] == 0
    fresh = SealState(config)
    fresh.submit_share(shares[0])
    fresh.reset_progress()
    assert fresh.status()["progress"] == 0


def test_rekey_needs_a_quorum_and_keeps_the_root_key(
        initialised: tuple[SealConfig, list[str]]) -> None:
    config, shares = initialised
    before = sealed_file.read(config.keyring_file)
    assert before is not None
    with pytest.raises(BadShare):
        operations.rekey(config, shares[:2], 3, 2)
    outcome = operations.rekey(config, shares[2:], 3, 2)
    assert len(outcome.shares) == 3 and outcome.threshold == 2
    state = SealState(config)
    for share in outcome.shares[:2]:
        state.submit_share(share)
    after = sealed_file.read(config.keyring_file)
    assert after is not None and after.keyring == before.keyring  # same root, same blob
    old = SealState(config)
    old.submit_share(shares[0])
    old.submit_share(shares[1])
    with pytest.raises(BadShare):
        old.submit_share(shares[3])


def test_seal_drops_the_keys_and_the_admin_socket_reaches_the_process(
        initialised: tuple[SealConfig, list[str]], caplog: pytest.LogCaptureFixture) -> None:
    config, shares = initialised
    caplog.set_level(logging.DEBUG)
    state = SealState(config)
    admin = AdminSocket(state, config.socket_dir)
    try:
        assert Path(config.socket_dir).stat().st_mode & 0o777 == 0o700
        for share in shares[:3]:
            [answer] = call_all(config.socket_dir, {"op": "unseal", "share": share})
            assert answer["ok"], answer
        assert not state.sealed
        [answer] = call_all(config.socket_dir, {"op": "seal"})
        assert answer["status"]["sealed"] and state.sealed
        with pytest.raises(Sealed):
            state.contents()
        bad = handle(state, {"op": "unseal", "share": "not a share at all"})
        assert not bad["ok"] and "SLIP-39" in bad["error"]
    finally:
        admin.close()
    logged = caplog.text + json.dumps([r.getMessage() for r in caplog.records])
    for share in shares:
        for word_run in (share, " ".join(share.split()[:4])):
            assert word_run not in logged
    assert "unseal share accepted (3 of 3)" in caplog.text or "unsealed" in caplog.text
