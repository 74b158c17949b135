"""A real HTTP(S) webhook receiver on 127.0.0.1 for tests.

It records every request (headers and raw body), answers from a script of :class:`Reply`
values (then 200), can hang until released (a slow endpoint), and can be stopped and started
again on the same port (receiver down, then up). Waiting for requests uses a condition
variable with a generous upper bound; tests never assert on durations.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import ssl
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: The only name in :func:`self_signed_certificate`'s certificate by default (no IP address).
TLS_HOSTNAME = "hooks.walletd.test"


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        status: HTTP status to send.
        body: Response body.
        headers: Extra response headers.
        hang: Wait until :meth:`WebhookReceiver.release` (or ``hang_limit_s``) before answering.
        drop: Close the connection without answering.
        drip_s: Send the status line, then ``drip_lines`` header lines with this pause before
            each (a receiver that answers, but ever so slowly).
        drip_lines: How many header lines a dripping answer has.
    """

    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    drop: bool = False
    drip_s: float = 0.0
    drip_lines: int = 50


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int | None

    def header(self, name: str) -> str | None:
        """Case-insensitive header lookup."""
        lowered = {k.lower(): v for k, v in self.headers.items()}
        return lowered.get(name.lower())

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    receiver: WebhookReceiver


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def _handle(self) -> None:
        """Record the request on arrival, then answer as scripted."""
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        receiver = self.server.receiver
        reply = receiver._next_reply()
        receiver._record(self, body, None if reply.drop else reply.status)
        if reply.hang:
            receiver._released.wait(receiver.hang_limit_s)
        if reply.drop:
            self.close_connection = True
            return
        if reply.drip_s > 0:
            self._drip(reply)
            return
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(reply.body)
        self.close_connection = True

    def _drip(self, reply: Reply) -> None:
        """Answer one header line at a time; count it as cut off if the client hangs up."""
        self.close_connection = True
        receiver = self.server.receiver
        try:
            self.wfile.write(f"HTTP/1.1 {reply.status} Slow\r\n".encode())
            for number in range(reply.drip_lines):
                if receiver._released.wait(reply.drip_s):
                    break
                self.wfile.write(f"X-Drip-{number}: .\r\n".encode())
            self.wfile.write(
                f"Content-Length: {len(reply.body)}\r\nConnection: close\r\n\r\n".encode()
                + reply.body
            )
        except OSError:
            receiver._cut_off()

    def log_message(self, format: str, *args: Any) -> None:
        return


class WebhookReceiver:
    """A threaded HTTP server bound to 127.0.0.1.

    Args:
        port: Port to bind; 0 picks a free one (kept across :meth:`stop`/:meth:`start`).
        tls: Server-side TLS context, for HTTPS tests.
        hang_limit_s: Upper bound on a ``Reply(hang=True)`` wait.
    """

    def __init__(
        self, port: int = 0, *, tls: ssl.SSLContext | None = None, hang_limit_s: float = 30.0
    ) -> None:
        self.port = port
        self.tls = tls
        self.hang_limit_s = hang_limit_s
        self.requests: list[Received] = []
        #: Dripping answers the client hung up on before they were complete.
        self.cut_off = 0
        self._script: deque[Reply] = deque()
        self._cond = threading.Condition()
        self._released = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> WebhookReceiver:
        """Start serving (again) on the same port."""
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.receiver = self
        if self.tls is not None:
            server.socket = self.tls.wrap_socket(server.socket, server_side=True)
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket (connections are then refused)."""
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._released.clear()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- scripting -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL of the receiver's ``/hook`` path."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/hook"

    def script(self, replies: Iterable[Reply]) -> None:
        """Queue answers for the next requests; afterwards every request gets 200."""
        with self._cond:
            self._script.extend(replies)

    def release(self) -> None:
        """Let every hanging request answer."""
        self._released.set()

    def _next_reply(self) -> Reply:
        with self._cond:
            return self._script.popleft() if self._script else Reply()

    def _record(self, handler: _Handler, body: bytes, status: int | None) -> None:
        item = Received(
            method=handler.command,
            path=handler.path,
            headers=dict(handler.headers.items()),
            body=body,
            status=status,
        )
        with self._cond:
            self.requests.append(item)
            self._cond.notify_all()

    def _cut_off(self) -> None:
        with self._cond:
            self.cut_off += 1
            self._cond.notify_all()

    # --- inspection ----------------------------------------------------------------------

    def wait_for(self, count: int, *, timeout_s: float = 30.0) -> list[Received]:
        """Block until at least ``count`` requests arrived; return a snapshot.

        Raises:
            TimeoutError: Fewer arrived within ``timeout_s``.
        """
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= count, timeout_s):
                raise TimeoutError(f"{len(self.requests)} of {count} webhook requests arrived")
            return list(self.requests)

    def wait_cut_off(self, count: int, *, timeout_s: float = 30.0) -> int:
        """Block until the client hung up on ``count`` dripping answers; return the count.

        Raises:
            TimeoutError: Fewer were cut off within ``timeout_s``.
        """
        with self._cond:
            if not self._cond.wait_for(lambda: self.cut_off >= count, timeout_s):
                raise TimeoutError(f"{self.cut_off} of {count} dripping answers were cut off")
            return self.cut_off

    def accepted(self) -> list[Received]:
        """Requests that were answered with a 2xx."""
        with self._cond:
            return [r for r in self.requests if r.status is not None and 200 <= r.status < 300]

    def accepted_event_ids(self) -> list[str]:
        """``X-Turnkey-Event-Id`` of every 2xx-answered request, in arrival order."""
        return [r.header("X-Turnkey-Event-Id") or "" for r in self.accepted()]


def self_signed_certificate(folder: Path, hostname: str = TLS_HOSTNAME) -> tuple[Path, Path]:
    """Write a one-day self-signed certificate for ``hostname`` and its key; return both paths.

    The certificate is its own CA, so passing its path as ``verify`` trusts exactly it.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def tls_server_context(cert_path: Path, key_path: Path) -> ssl.SSLContext:
    """A server-side TLS context for :class:`WebhookReceiver`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context
