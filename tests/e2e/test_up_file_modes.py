"""``walletd up``'s data dir is its user's alone (issue 31 item 5).

Who: another local user of the machine. What they hold: a shell, the default umask's
world-readable files. What they try: copy ``walletd.sqlite3`` (every tenant's rows) and the
static seal's key file beside it. What stops it: ``walletd up`` runs with umask 077, makes
its data dir 0700 and narrows a data dir an older version left wider, with a log line.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.support.deployment import Deployment

PRIVATE = ("walletd.sqlite3", "keyring.sealed", "static-seal.key", "root-api-key.json")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _wider(data: Path) -> list[str]:
    """Every path under ``data`` another user could read, write or enter."""
    found = []
    for current, dirs, files in os.walk(data):
        for name in [".", *dirs, *files]:
            path = Path(current) / name
            if not stat.S_ISLNK(path.lstat().st_mode) and _mode(path) & 0o077:
                found.append(f"{path} {_mode(path):04o}")
    return found


def test_walletd_up_keeps_its_data_dir_to_its_user(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = os.umask(0o022)  # the usual umask, inherited by the process
    try:
        dep = Deployment.embedded(tmp_path)
    finally:
        os.umask(old)
    try:
        assert dep.client().get_whoami().organizationId == dep.root.organization_id
        assert _mode(data) == 0o700
        for name in PRIVATE:
            assert _mode(data / name) == 0o600, name
        assert _wider(data) == []
    finally:
        dep.stop()

    # A data dir an older walletd left readable to everyone: narrowed at the next start.
    os.chmod(data, 0o755)
    for name in PRIVATE:
        os.chmod(data / name, 0o644)
    os.umask(0o022)
    try:
        again = Deployment.embedded(tmp_path)
    finally:
        os.umask(old)
    try:
        assert again.client().get_whoami().organizationId == dep.root.organization_id
        assert _wider(data) == []
        assert "made" in again.log("up") and "private to this user" in again.log("up")
    finally:
        again.stop()
