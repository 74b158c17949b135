"""``walletd up --data-dir D --port P`` writes ``D/root-api-key.json`` once, privately.

Started exactly as a user would (flags only, no WALLETD_* variables), on the embedded path.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from turnkey_sdk_types import GetWhoamiBody

from tests.support.deployment import WALLETD, Deployment, Key, _env, free_port


def _up(data: Path, workdir: Path) -> tuple[Deployment, int]:
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    dep = Deployment(f"http://127.0.0.1:{port}", Key("", "", "", ""), _env({}), workdir)
    dep._spawn("up", [*WALLETD, "up", "--data-dir", str(data), "--port", str(port)])
    dep.wait_ready()
    return dep, port


def test_root_api_key_file_is_private_complete_and_written_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    key_file = data / "root-api-key.json"

    dep, port = _up(data, tmp_path / "first")
    try:
        assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
        record = json.loads(key_file.read_text())
        assert set(record) == {"organizationId", "userId", "apiPublicKey", "apiPrivateKey",
                               "baseUrl"}
        assert record["baseUrl"] == f"http://127.0.0.1:{port}"
        assert len(record["apiPrivateKey"]) == 64 and int(record["apiPrivateKey"], 16) >= 0
        assert len(record["apiPublicKey"]) == 66 and record["apiPublicKey"][:2] in ("02", "03")
        printed = dep.log("up")
        assert str(key_file) in printed and "created root organization" in printed

        # The key in the file is the root user's API key of the root organization.
        dep.root = Key(record["organizationId"], record["userId"], record["apiPublicKey"],
                       record["apiPrivateKey"])
        who = dep.client().get_whoami(GetWhoamiBody(organizationId=record["organizationId"]))
        assert (who.organizationId, who.userId) == (record["organizationId"], record["userId"])
    finally:
        dep.stop()

    before = key_file.read_bytes()
    before_stat = os.stat(key_file)
    again, _ = _up(data, tmp_path / "second")
    try:
        printed = again.log("up")
        assert str(key_file) in printed and "created root organization" not in printed
        assert key_file.read_bytes() == before
        after_stat = os.stat(key_file)
        assert (after_stat.st_ino, after_stat.st_mtime_ns) == (before_stat.st_ino,
                                                               before_stat.st_mtime_ns)
        assert stat.S_IMODE(after_stat.st_mode) == 0o600
    finally:
        again.stop()
