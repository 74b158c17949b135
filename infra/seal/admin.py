"""The per-process admin socket ``walletd operator`` reaches running processes through.

Every process with a seal listens on a Unix socket ``<WALLETD_SEAL_SOCKET_DIR>/<pid>.sock``
(directory 0700, socket 0600, and the peer's uid must be ours: ``SO_PEERCRED``). One JSON
line in, one JSON line out: ``{"op": "status"}``, ``{"op": "unseal", "share": "..."}``,
``{"op": "unseal"}`` (auto seals: try again now), ``{"op": "seal"}``. A share goes from the
operator's terminal to the process's memory through the kernel only: never the database,
the broker, a file or a log.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import socket
import socketserver
import struct
import threading
from pathlib import Path
from typing import Any

from infra.errors import WalletError
from infra.seal.state import SealState

log = logging.getLogger("walletd.seal")

MAX_REQUEST = 4096


def _socket_dir(path: str) -> Path:
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(p, 0o700)
    return p


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def handle(state: SealState, request: dict[str, Any]) -> dict[str, Any]:
    """Answer one request (the socket's handler; tests call it too)."""
    op = request.get("op")
    try:
        if op == "status":
            return {"ok": True, "status": state.status()}
        if op == "unseal":
            share = request.get("share")
            if share is None:
                return {"ok": True, "status": state.resume_auto()}
            if not isinstance(share, str):
                return {"ok": False, "error": "share must be a string"}
            return {"ok": True, "status": state.submit_share(share)}
        if op == "reset":
            state.reset_progress()
            return {"ok": True, "status": state.status()}
        if op == "seal":
            return {"ok": True, "status": state.seal()}
    except WalletError as err:
        return {"ok": False, "error": err.message, "status": state.status()}
    return {"ok": False, "error": f"unknown operation {op!r}"}


class AdminSocket:
    """The listening socket of one process (a daemon thread)."""

    def __init__(self, state: SealState, directory: str) -> None:
        self.state = state
        self.path = _socket_dir(directory) / f"{os.getpid()}.sock"
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                if _peer_uid(self.request) != os.getuid():
                    return
                line = self.rfile.readline(MAX_REQUEST)
                try:
                    request = json.loads(line)
                    if not isinstance(request, dict):
                        raise ValueError("not an object")
                except ValueError:
                    answer: dict[str, Any] = {"ok": False, "error": "one JSON object per line"}
                else:
                    answer = handle(owner.state, request)
                self.wfile.write(json.dumps(answer).encode() + b"\n")

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        old = os.umask(0o177)
        try:
            self.server = Server(str(self.path), Handler)
        finally:
            os.umask(old)
        self.thread = threading.Thread(target=self.server.serve_forever, name="walletd-seal-admin",
                                       daemon=True)
        self.thread.start()
        atexit.register(self.close)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.server.shutdown()
            self.server.server_close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def call(path: Path, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    """Send one request to one process."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data or b"{}")
    return answer if isinstance(answer, dict) else {"ok": False, "error": "bad answer"}


def call_all(directory: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Send ``request`` to every live process under ``directory`` (stale sockets removed)."""
    answers: list[dict[str, Any]] = []
    p = Path(directory)
    if not p.is_dir():
        return answers
    for path in sorted(p.glob("*.sock")):
        try:
            answers.append(call(path, request))
        except (ConnectionRefusedError, FileNotFoundError):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # the process is gone
        except OSError as ex:
            answers.append({"ok": False, "error": f"{path.name}: {ex.strerror or ex}"})
    return answers
