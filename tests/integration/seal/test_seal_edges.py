"""The seal's edges (issue 31 item 5), each tried from the attacker's side beside the honest
flow it must keep working.

- The static seal in production. Who: whoever can read the disk (a backup, a volume snapshot)
  of a data dir promoted from ``walletd up``. What they try: nothing; the deployment signs
  with the static key file sitting beside the data. What stops it: ``walletd worker`` and
  ``walletd auth-proxy`` refuse to start under static without ``WALLETD_SEAL_ALLOW_STATIC``.
- The unseal socket. Who: another local user. What they hold: write access to the socket
  directory (shared or mis-set ``WALLETD_SEAL_SOCKET_DIR``), or a listener of their own in it.
  What they try: collect the share ``walletd operator unseal`` sends to every socket. What
  stops it: the client refuses a directory it does not own or that others can write, and a
  listener whose ``SO_PEERCRED`` uid is not its own or root's, before sending anything to
  anyone; a shamir worker refuses such a directory at start.
- Core dumps. Who: a same-user process without ``CAP_SYS_PTRACE`` (a compromised sidecar), or
  whoever reads core files. What stops it: root-key processes set ``PR_SET_DUMPABLE`` 0 and
  ``RLIMIT_CORE`` 0.

The second uid is real: ``nobody`` owns the directory or runs the listener (``setpriv``).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from infra.db.migrate import upgrade
from infra.seal import operations
from infra.seal.admin import AdminSocket
from infra.seal.errors import StaticSealRefused, UnsafeSocketDirectory
from infra.seal.state import SealState
from infra.seal.wiring import open_seal, seal_config
from infra.settings import Settings
from tests.support import services
from tests.support.deployment import ROOT, WALLETD

NOBODY = 65534
#: Run as root's uid without any capability: ptrace rules then apply as to an ordinary user.
NO_CAPS = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"]
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]

#: A listener of another user: accepts one connection and prints what it received.
LISTENER = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4)
print("ready", flush=True)
conn, _ = s.accept()
data = b""
while True:
    chunk = conn.recv(65536)
    if not chunk:
        break
    data += chunk
print("received", repr(data), flush=True)
"""


def _env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WALLETD_")}
    return {**env, "PYTHONPATH": str(ROOT), "WALLETD_DATA_DIR": str(data), **extra}


def _walletd(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALLETD, *args], env=env, cwd=ROOT, text=True, capture_output=True,
                          timeout=120)


def _settings(data: Path, *, production: bool = True, **env: str) -> Settings:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(data), **env})
    # What walletd.cli gives every command but `walletd up`.
    return replace(settings, seal_default="shamir") if production else settings


def _initialise(data: Path, kind: str, **env: str) -> operations.Outcome:
    config = seal_config(_settings(data, **env))
    return operations.initialise(config, kind, count=3, threshold=2, now_ms=1)


# --- the static seal in production ---------------------------------------------------------


@pytest.mark.parametrize("command", [("worker", "--queues", "consensus"), ("auth-proxy",)])
@pytest.mark.parametrize("seal", ["", "static"])
def test_a_production_process_refuses_a_promoted_static_data_dir(
        tmp_path: Path, command: tuple[str, ...], seal: str) -> None:
    data = tmp_path / "data"
    _initialise(data, "static")  # what `walletd up` leaves behind
    env = _env(data, **({"WALLETD_SEAL": seal} if seal else {}))
    done = _walletd(env, *command)
    assert done.returncode == 2, done.stderr
    assert "static seal is refused" in done.stderr and "WALLETD_SEAL_ALLOW_STATIC" in done.stderr
    assert not (data / "run").exists()  # nothing started, no socket made


def test_a_worker_process_checks_the_static_seal_itself(tmp_path: Path) -> None:
    """A worker process started by another supervisor than ``walletd worker``."""
    data = tmp_path / "data"
    _initialise(data, "static")
    with pytest.raises(StaticSealRefused, match="WALLETD_SEAL_ALLOW_STATIC"):
        open_seal(_settings(data).for_role("worker"), "worker")

    allowed = _settings(data, WALLETD_SEAL_ALLOW_STATIC="true").for_role("worker")
    state = open_seal(allowed, "worker")
    try:
        assert not state.sealed and state.type == "static"
    finally:
        state.admin.close()
        state.stop()
    # `walletd up` and in-process use keep the static seal without the opt-in.
    embedded = open_seal(_settings(data, production=False).for_role("embedded"), "embedded")
    try:
        assert not embedded.sealed
    finally:
        embedded.admin.close()
        embedded.stop()


def _proc_readable(pid: int) -> bool:
    """Whether a process of root's uid without capabilities may read ``/proc/<pid>/environ``
    (the same-uid ptrace rule: refused when the target is not dumpable)."""
    probe = subprocess.run([*NO_CAPS, "head", "-c", "1", f"/proc/{pid}/environ"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


def _core_limit(pid: int) -> list[str]:
    line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines()
                if x.startswith("Max core file size"))
    return line.split()[4:6]


def _cores_allowed() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def test_a_production_worker_with_the_opt_in_signs_and_cannot_be_dumped(tmp_path: Path) -> None:
    db, vhost = services.create_database(), services.create_vhost()
    data = tmp_path / "data"
    worker = control = None
    try:
        upgrade(db)
        _initialise(data, "static")
        env = _env(data, WALLETD_DATABASE_URL=db, WALLETD_BROKER_URL=vhost,
                   WALLETD_SEAL_ALLOW_STATIC="true")
        with open(tmp_path / "worker.log", "wb") as log:
            # Started with core files allowed and without capabilities: what it ends up with
            # is its own doing.
            worker = subprocess.Popen([*NO_CAPS, *WALLETD, "worker", "--queues", "consensus",
                                       "--processes", "1"], env=env, cwd=ROOT, stdout=log,
                                      stderr=subprocess.STDOUT, preexec_fn=_cores_allowed)
            control = subprocess.Popen([*NO_CAPS, "sleep", "120"], preexec_fn=_cores_allowed)
        deadline = time.monotonic() + 90
        status: dict[str, object] = {}
        while time.monotonic() < deadline and worker.poll() is None:
            if (data / "run" / f"{worker.pid}.sock").exists():
                answer = _walletd(env, "operator", "status")
                processes = json.loads(answer.stdout)["processes"] if answer.returncode == 0 else []
                status = next((p for p in processes if p.get("pid") == worker.pid), {})
                if status.get("sealed") is False:
                    break
            time.sleep(0.5)
        assert status.get("sealed") is False and status.get("type") == "static", \
            (tmp_path / "worker.log").read_text()[-3000:]

        assert _core_limit(control.pid) == ["unlimited", "unlimited"]
        assert _core_limit(worker.pid) == ["0", "0"]
        assert _proc_readable(control.pid)  # the probe can read a dumpable process
        assert not _proc_readable(worker.pid)  # and not the worker
    finally:
        for proc in (worker, control):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(60)
        services.drop_database(db)
        services.delete_vhost(vhost)


# --- the unseal socket ---------------------------------------------------------------------


@dataclass
class Shamir:
    """A running shamir-sealed process of this user (its admin socket under ``run``)."""

    state: SealState
    shares: list[str]
    base: Path
    env: dict[str, str]

    @property
    def run(self) -> Path:
        return self.base / "run"

    def progress(self) -> int:
        return int(self.state.status()["progress"])

    def unseal(self, share: str) -> subprocess.CompletedProcess[str]:
        return _walletd(self.env, "operator", "unseal", share)


@pytest.fixture
def shamir(tmp_path: Path) -> Iterator[Shamir]:
    # A base another uid can traverse (pytest's tmp_path is root's alone), one filesystem.
    base = Path(tempfile.mkdtemp(prefix="walletd-seal-edges-"))
    os.chmod(base, 0o711)
    data = tmp_path / "data"
    seal_env = {"WALLETD_SEAL": "shamir", "WALLETD_SEAL_SOCKET_DIR": str(base / "run")}
    outcome = _initialise(data, "shamir", **seal_env)
    state = SealState(seal_config(_settings(data, **seal_env)))
    admin = AdminSocket(state, str(base / "run"))
    try:
        yield Shamir(state, outcome.shares, base, _env(data, **seal_env))
    finally:
        admin.close()
        state.stop()
        shutil.rmtree(base, ignore_errors=True)


def test_the_operator_unseals_through_a_directory_of_its_own(shamir: Shamir) -> None:
    assert shamir.run.stat().st_mode & 0o777 == 0o700
    [sock] = shamir.run.glob("*.sock")
    assert sock.stat().st_mode & 0o777 == 0o600
    first = shamir.unseal(shamir.shares[0])
    assert first.returncode == 0, first.stderr
    assert shamir.progress() == 1
    assert shamir.unseal(shamir.shares[1]).returncode == 0
    assert not shamir.state.sealed


def test_a_directory_of_another_user_gets_no_share(shamir: Shamir) -> None:
    os.chown(shamir.run, NOBODY, NOBODY)  # a shared or mis-set WALLETD_SEAL_SOCKET_DIR
    refused = shamir.unseal(shamir.shares[0])
    assert refused.returncode == 1
    assert f"belongs to uid {NOBODY}" in refused.stderr
    assert "WALLETD_SEAL_SOCKET_DIR" in refused.stderr
    assert shamir.progress() == 0  # nothing was sent, not even to our own process
    # and a worker does not listen there
    with pytest.raises(UnsafeSocketDirectory, match=f"uid {NOBODY}"):
        AdminSocket(SealState(shamir.state.config), str(shamir.run))


def test_a_directory_others_can_write_gets_no_share(shamir: Shamir) -> None:
    os.chmod(shamir.run, 0o777)
    refused = shamir.unseal(shamir.shares[0])
    assert refused.returncode == 1
    assert "writable by its group or others (mode 0777)" in refused.stderr
    assert shamir.progress() == 0
    with pytest.raises(UnsafeSocketDirectory, match="writable by its group or others"):
        AdminSocket(SealState(shamir.state.config), str(shamir.run))


def test_a_listener_of_another_user_gets_no_share(shamir: Shamir) -> None:
    own = shamir.base / "nobody"
    own.mkdir(mode=0o700)
    os.chown(own, NOBODY, NOBODY)
    listener = subprocess.Popen([*AS_NOBODY, "/usr/bin/python3", "-c", LISTENER,
                                 str(own / "l.sock")], stdout=subprocess.PIPE, text=True)
    try:
        assert listener.stdout is not None and listener.stdout.readline().strip() == "ready"
        # Its socket among ours (sorted last: a client sending as it goes would already have
        # given the share to our own process).
        os.rename(own / "l.sock", shamir.run / "99999999.sock")
        refused = shamir.unseal(shamir.shares[0])
        assert refused.returncode == 1
        assert f"runs as uid {NOBODY}" in refused.stderr and "nothing was sent" in refused.stderr
        received, _ = listener.communicate(timeout=30)
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.wait(30)
    assert received.strip() == "received b''"
    assert shamir.progress() == 0


def test_a_shamir_worker_does_not_start_on_an_unsafe_directory(shamir: Shamir) -> None:
    os.chmod(shamir.run, 0o770)
    done = _walletd(shamir.env, "worker", "--queues", "consensus")
    assert done.returncode == 2
    assert "writable by its group or others (mode 0770)" in done.stderr
    settings = Settings.from_env(shamir.env)
    with pytest.raises(UnsafeSocketDirectory):
        open_seal(replace(settings, seal_default="shamir").for_role("worker"), "worker")

    # The honest start: a directory it makes itself, 0700, its socket 0600.
    fresh = {**shamir.env, "WALLETD_SEAL_SOCKET_DIR": str(shamir.base / "fresh")}
    state = open_seal(replace(Settings.from_env(fresh), seal_default="shamir").for_role(
        "worker"), "worker")
    try:
        assert state.sealed and state.admin is not None
        assert (shamir.base / "fresh").stat().st_mode & 0o777 == 0o700
        assert state.admin.path.stat().st_mode & 0o777 == 0o600
    finally:
        state.admin.close()
        state.stop()
