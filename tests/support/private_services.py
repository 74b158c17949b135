"""A PostgreSQL cluster and a RabbitMQ node of one's own, to stop and restart at will.

The machine's shared PostgreSQL (5432) and RabbitMQ (5672) serve every engineer's tests at
once and must never be restarted. Chaos runs start private servers instead:

- :class:`PrivatePostgres`: ``initdb`` into a temporary directory, run on a free port of
  127.0.0.1 with trust authentication, as the ``postgres`` OS user when started by root
  (PostgreSQL refuses to run as root), as the calling user otherwise.
- :class:`PrivateRabbit`: a node with its own name, AMQP and distribution ports, Mnesia and
  log directories, configuration, Erlang cookie (its own ``HOME``) and its own ``epmd`` on a
  free port (``ERL_EPMD_PORT``), so nothing is registered with the shared ``epmd``.

Both bind 127.0.0.1 only, wait with bounded loops, and delete their directory on
:meth:`close` (also when started from a ``with`` block that raises).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import Self

from tests.support.deployment import free_port

RABBIT_BIN = Path("/usr/lib/rabbitmq/bin")


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin")
    return Path(found[-1]).parent


def _wait_port(port: int, timeout: float) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")


def available() -> str | None:
    """Why private servers cannot run here (``None`` when they can)."""
    try:
        _pg_bin()
    except RuntimeError as ex:
        return str(ex)
    if not (RABBIT_BIN / "rabbitmq-server").exists():
        return f"RabbitMQ server scripts not found in {RABBIT_BIN}"
    return None


class _Private:
    """A temporary directory that is removed on close."""

    def __init__(self, prefix: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivatePostgres(_Private):
    """A throw-away PostgreSQL cluster (``url`` is its ``postgres`` database).

    ``fsync=off``: a restart here stops the server processes, not the machine, so the
    operating system's page cache survives it and committed data is kept.
    """

    def __init__(self) -> None:
        super().__init__("walletd-pg-")
        self.bin = _pg_bin()
        self.port = free_port()
        self.data = self.dir / "data"
        try:
            if os.geteuid() == 0:
                shutil.chown(self.dir, "postgres")
            self._pg("initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres",
                     "-E", "UTF8", "--no-sync")
            self.start()
        except BaseException:
            self.close()
            raise

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _pg(self, tool: str, *args: str, timeout: float = 60) -> None:
        # PostgreSQL refuses to run as root: as root, run it as the postgres user.
        user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*user, str(self.bin / tool), *args],
                       check=True, capture_output=True, timeout=timeout, cwd=self.dir)

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   f"-c max_connections=300")
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"),
                 "-o", options, "-w", "-t", "60", "start", timeout=90)

    def stop(self, mode: str = "immediate") -> None:
        """``immediate``: every server process quits at once (crash recovery on start)."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop", timeout=90)

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                self.stop()
        super().close()


class PrivateRabbit(_Private):
    """A throw-away RabbitMQ node (``url``: guest/guest on its default vhost)."""

    def __init__(self) -> None:
        super().__init__("walletd-rmq-")
        self.port, self.dist_port, self.epmd_port = free_port(), free_port(), free_port()
        self.node = f"walletd-chaos-{uuid.uuid4().hex[:8]}@localhost"
        self.process: subprocess.Popen[bytes] | None = None
        home = self.dir / "home"
        for sub in ("home", "mnesia", "log"):
            (self.dir / sub).mkdir()
        (self.dir / "rabbitmq.conf").write_text(
            f"listeners.tcp.local = 127.0.0.1:{self.port}\nloopback_users = none\n")
        (self.dir / "rabbitmq-env.conf").write_text("")
        (self.dir / "enabled_plugins").write_text("[].\n")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))},
            "HOME": str(home),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(self.dir / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.dir / "log"),
            "RABBITMQ_CONFIG_FILE": str(self.dir / "rabbitmq.conf"),
            "RABBITMQ_CONF_ENV_FILE": str(self.dir / "rabbitmq-env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.dir / "enabled_plugins"),
            "RABBITMQ_SERVER_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
            "ERL_EPMD_PORT": str(self.epmd_port),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
        }
        try:
            self.start()
        except BaseException:
            self.close()
            raise

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}/%2F"

    def start(self, timeout: float = 120) -> None:
        log = open(self.dir / "server.out", "ab")  # noqa: SIM115 (closed with the process)
        self.process = subprocess.Popen([str(RABBIT_BIN / "rabbitmq-server")], env=self.env,
                                        cwd=self.dir, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        log.close()
        self._wait_amqp(timeout)

    def _wait_amqp(self, timeout: float) -> None:
        import pika

        deadline = time.monotonic() + timeout
        _wait_port(self.port, timeout)
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"RabbitMQ node exited:\n{self.log()}")
            try:
                pika.BlockingConnection(pika.URLParameters(self.url)).close()
                return
            except pika.exceptions.AMQPError:
                time.sleep(0.2)
        raise RuntimeError(f"RabbitMQ node did not accept AMQP in {timeout:.0f} s:\n{self.log()}")

    def stop(self) -> None:
        """Stop the node the way an operator does (``rabbitmqctl stop``), SIGKILL if stuck."""
        if self.process is None:
            return
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run([str(RABBIT_BIN / "rabbitmqctl"), "-n", self.node, "stop"],
                           env=self.env, capture_output=True, timeout=60)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        self.process = None

    def log(self) -> str:
        path = self.dir / "server.out"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def close(self) -> None:
        try:
            if self.process is not None and self.process.poll() is None:
                self.stop()
        finally:
            self.process = None
            self._stop_epmd()
            super().close()

    def _stop_epmd(self) -> None:
        """The private epmd daemonized out of the node's session: ask it to quit (it refuses
        while a node is still registered, so a few bounded tries)."""
        for _ in range(20):
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                subprocess.run(["epmd", "-port", str(self.epmd_port), "-kill"],
                               capture_output=True, timeout=10)
            try:
                _wait_port(self.epmd_port, 0.5)
            except RuntimeError:
                return
            time.sleep(0.5)
