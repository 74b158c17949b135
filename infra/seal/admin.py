"""The per-process admin socket ``walletd operator`` reaches running processes through.

Every process with a seal listens on a Unix socket ``<WALLETD_SEAL_SOCKET_DIR>/<pid>.sock``
(directory 0700, socket 0600, and the peer's uid must be ours: ``SO_PEERCRED``). Both ends
trust the directory only when it is theirs: a listener refuses a directory of another user
or one its group or others can write (:class:`UnsafeSocketDirectory`); the client
(``walletd operator``) refuses the same (root's is fine too) and, before it sends anything,
checks that every listener runs as its own uid or root (:class:`ForeignListener`). One JSON
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
import stat
import struct
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any

from infra.errors import WalletError
from infra.seal.errors import ForeignListener, UnsafeSocketDirectory
from infra.seal.state import SealState

log = logging.getLogger("walletd.seal")

MAX_REQUEST = 4096


def check_directory(path: Path, owners: Collection[int]) -> None:
    """Refuse a socket directory that is not a directory owned by one of ``owners``, or that
    its group or others can write (they could put a socket of their own there, or replace
    ours).

    Raises:
        UnsafeSocketDirectory: naming the directory and the rule it breaks.
    """
    info = os.stat(path)
    rule = ("the seal's socket directory (WALLETD_SEAL_SOCKET_DIR) must belong to this user "
            + ("or root " if 0 in owners and os.getuid() != 0 else "")
            + "and be writable by nobody else")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeSocketDirectory(f"{path} is not a directory: {rule}")
    if info.st_uid not in owners:
        raise UnsafeSocketDirectory(f"{path} belongs to uid {info.st_uid}, not to uid "
                                    f"{os.getuid()}: {rule}")
    if info.st_mode & 0o022:
        raise UnsafeSocketDirectory(f"{path} is writable by its group or others (mode "
                                    f"{stat.S_IMODE(info.st_mode):04o}): {rule}")


def check_listener_directory(path: str) -> None:
    """What a listening process requires of an existing socket directory (its own, writable by
    nobody else); a directory not made yet is fine (:class:`AdminSocket` makes it 0700)."""
    p = Path(path)
    if p.exists():
        check_directory(p, {os.getuid()})


def _socket_dir(path: str) -> Path:
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_directory(p, {os.getuid()})
    os.chmod(p, 0o700)
    return p


def _trusted_uids() -> frozenset[int]:
    return frozenset({os.getuid(), 0})


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
        """Listen under ``directory``.

        Raises:
            UnsafeSocketDirectory: the directory is another user's or others can write it.
            OSError: it cannot be made or bound.
        """
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


def connect(path: Path, timeout: float = 30.0) -> socket.socket:
    """A connection to one process's socket whose listener runs as this user or root.

    Raises:
        ForeignListener: the listener runs as another uid (the connection is closed).
        OSError: nothing listens there.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(str(path))
        uid = _peer_uid(sock)
    except BaseException:
        sock.close()
        raise
    if uid not in _trusted_uids():
        sock.close()
        raise ForeignListener(f"{path}: its listener runs as uid {uid}, not as uid "
                              f"{os.getuid()} or root: the seal's admin sockets must belong "
                              "to the walletd user; nothing was sent to any process")
    return sock


def exchange(sock: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
    """Send one request on a connection from :func:`connect`; its answer."""
    with sock:
        sock.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data or b"{}")
    return answer if isinstance(answer, dict) else {"ok": False, "error": "bad answer"}


def call(path: Path, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    """Send one request to one process (its listener checked as :func:`connect` does)."""
    return exchange(connect(path, timeout), request)


def call_all(directory: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Send ``request`` to every live process under ``directory`` (stale sockets removed).

    Every listener is connected to and checked first; the request goes out only when the
    directory and every listener are trusted, so a refusal sends nothing to anyone.

    Raises:
        UnsafeSocketDirectory: ``directory`` belongs to another user or others can write it.
        ForeignListener: a socket there is served by another uid.
    """
    answers: list[dict[str, Any]] = []
    p = Path(directory)
    if not p.is_dir():
        return answers
    check_directory(p, _trusted_uids())
    connections: list[socket.socket] = []
    try:
        for path in sorted(p.glob("*.sock")):
            try:
                connections.append(connect(path))
            except (ConnectionRefusedError, FileNotFoundError):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()  # the process is gone
            except OSError as ex:
                answers.append({"ok": False, "error": f"{path.name}: {ex.strerror or ex}"})
    except BaseException:
        for sock in connections:
            sock.close()
        raise
    for sock in connections:
        try:
            answers.append(exchange(sock, request))
        except OSError as ex:
            answers.append({"ok": False, "error": f"{ex.strerror or ex}"})
        except ValueError:
            answers.append({"ok": False, "error": "an answer that is not JSON"})
    return answers
