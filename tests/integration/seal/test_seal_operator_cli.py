"""``walletd operator`` as an operator runs it: the upgrade of a deployment whose keys sit in
clear (one command), init's output, status, rekey and migration from the command line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from infra.crypto.keyring import init_keyring_file
from infra.seal.state import SealState
from infra.seal.wiring import seal_config
from infra.settings import Settings
from infra.webhooks.signing import keyring_from_json, load_or_create_keyring
from tests.support.deployment import ROOT, WALLETD


def _walletd(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALLETD, *args], env={**env, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                          text=True, input=stdin, capture_output=True, timeout=120)


def test_upgrade_seals_the_plaintext_key_files_with_one_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"WALLETD_DATA_DIR": str(data), "PATH": "/usr/bin:/bin"}
    settings = Settings.from_env(env)
    master = init_keyring_file(settings.master_key_file)
    webhooks = load_or_create_keyring(data / "webhook-signing-keys.json", now_ms=1)
    proxy = {"privateKey": "11" * 32, "publicKey": "04" + "22" * 64}
    (data / "auth-proxy-key.json").write_text(json.dumps(proxy))
    (data / "auth-proxy-key.json").chmod(0o600)
    assert _walletd(env, "migrate").returncode == 0
    plaintext = [settings.master_key_file, data / "webhook-signing-keys.json",
                 data / "auth-proxy-key.json"]

    done = _walletd(env, "operator", "init", "--shares", "5", "--threshold", "3",
                    "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert len(out["shares"]) == 5 and out["threshold"] == 3 and out["type"] == "shamir"
    assert done.stderr.count("overwrote and removed") == 3
    for path in plaintext:
        assert not Path(path).exists()
    assert sorted(p.name for p in data.iterdir()) == ["keyring.sealed", "keyring.sealed.lock",
                                                      "walletd.sqlite3"]

    state = SealState(seal_config(settings.for_role("cli")))
    for share in out["shares"][:3]:
        state.submit_share(share)
    contents = state.contents()
    assert contents.master.current_key().key_secret == master.current_key().key_secret
    assert keyring_from_json(contents.webhooks) == webhooks
    assert contents.auth_proxy == proxy
    sealed_text = (data / "keyring.sealed").read_text()
    assert "11" * 32 not in sealed_text and json.loads(sealed_text)["public"][
        "auth_proxy_public_key"] == proxy["publicKey"]

    again = _walletd(env, "operator", "init")
    assert again.returncode == 1 and "initialised already" in again.stderr
    status = json.loads(_walletd(env, "operator", "status").stdout)
    assert status["sealed"] and status["type"] == "shamir" and status["threshold"] == 3
    assert status["initialized"] and status["processes"] == []

    rekeyed = _walletd(env, "operator", "rekey", "--shares", "3", "--threshold", "2",
                       "--format", "json", stdin="\n".join(out["shares"][2:]) + "\n")
    assert rekeyed.returncode == 0, rekeyed.stderr
    new_shares = json.loads(rekeyed.stdout)["shares"]
    assert len(new_shares) == 3
    moved = _walletd({**env, "WALLETD_SEAL": "static"}, "operator", "seal-migrate", "--to",
                     "static", stdin="\n".join(new_shares[:2]) + "\n")
    assert moved.returncode == 0, moved.stderr
    keys = _walletd({**env, "WALLETD_SEAL": "static"}, "keys", "rotate")
    assert keys.returncode == 0 and "master key version 2 is current" in keys.stdout, keys.stderr
