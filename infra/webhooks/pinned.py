"""HTTP requests pinned to a checked address, with a deadline on every send and read.

Shared by webhook delivery (``notifier.delivery``) and the OIDC / OAuth 2.0 egress
(``infra.sessions.egress``): after :func:`~infra.webhooks.destinations.resolve_destination`
checked an address, :class:`PinnedAdapter` connects to exactly that address while SNI, the
certificate hostname check and the ``Host`` header use the original name
(:func:`pinned_url`), so a second resolution (DNS rebinding) cannot redirect the request.
Every send and response read is bounded by ``min(socket timeout, time left)`` until the
deadline (``time.monotonic``), so a peer that drips bytes cannot hold a request open.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import http.client
import io
import math
import socket
import time
from collections.abc import Iterator
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from infra.webhooks.destinations import ResolvedDestination

#: The deadline of the request this thread is making (``time.monotonic``), for connections
#: kept alive across requests (:func:`request_deadline`); ``inf`` when none is set.
_REQUEST_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar(
    "walletd_request_deadline", default=math.inf)


@contextlib.contextmanager
def request_deadline(deadline: float) -> Iterator[None]:
    """Bound every send and read of the requests made inside the block by ``deadline``.

    A :class:`PinnedAdapter` built without a deadline of its own keeps its connections alive
    across requests; each request's deadline comes from here, per thread.
    """
    token = _REQUEST_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _REQUEST_DEADLINE.reset(token)


class DeadlineExceeded(socket.timeout):
    """The attempt's deadline passed before this send or read could start."""


def time_left(deadline: float) -> float:
    """Seconds until ``deadline``; :class:`DeadlineExceeded` once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("the attempt's deadline passed")
    return left


class _DeadlineReader(io.RawIOBase):
    """The response socket, each read bounded by ``min(read timeout, time left)``."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._raw = raw
        self._sock = sock
        self._deadline = deadline
        self._per_read = sock.gettimeout()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = time_left(self._deadline)
        self._sock.settimeout(left if self._per_read is None else min(self._per_read, left))
        result: int | None = self._raw.readinto(buffer)
        return result

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    """``http.client``'s response reading through a :class:`_DeadlineReader`."""

    def __init__(self, sock: socket.socket, debuglevel: int = 0, method: str | None = None,
                 url: str | None = None, *, deadline: float) -> None:
        super().__init__(sock, debuglevel, method, url)
        assert self.fp is not None
        self.fp = io.BufferedReader(_DeadlineReader(self.fp.detach(), sock, deadline))


class _DeadlineConnectionMixin:
    """Sends and response reads of a connection never run past ``attempt_deadline``: the
    pool's fixed deadline or the current request's (:func:`request_deadline`), the earlier."""

    fixed_deadline: float = math.inf
    sock: socket.socket | None

    @property
    def attempt_deadline(self) -> float:
        return min(self.fixed_deadline, _REQUEST_DEADLINE.get())

    def send(self, data: Any) -> None:
        left = time_left(self.attempt_deadline)
        if self.sock is not None:
            current = self.sock.gettimeout()
            self.sock.settimeout(left if current is None else min(current, left))
        super().send(data)  # type: ignore[misc]

    def response_class(self, sock: socket.socket, method: str | None = None) -> _DeadlineResponse:
        return _DeadlineResponse(sock, method=method, deadline=self.attempt_deadline)


class _DeadlineHTTPConnection(_DeadlineConnectionMixin, HTTPConnection):  # type: ignore[misc]
    pass


class _DeadlineHTTPSConnection(_DeadlineConnectionMixin, HTTPSConnection):  # type: ignore[misc]
    pass


class _DeadlinePoolMixin:
    """A connection pool whose new connections carry the attempt's deadline."""

    def __init__(self, *args: Any, attempt_deadline: float, **kwargs: Any) -> None:
        self.attempt_deadline = attempt_deadline
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> Any:
        conn = super()._new_conn()  # type: ignore[misc]
        conn.fixed_deadline = self.attempt_deadline
        return conn


class _DeadlineHTTPPool(_DeadlinePoolMixin, HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _DeadlineHTTPSPool(_DeadlinePoolMixin, HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


class PinnedAdapter(HTTPAdapter):
    """A transport adapter whose TLS checks use ``hostname`` while connecting to an address,
    and whose connections stop sending and reading at ``deadline`` (``time.monotonic``).

    Without a ``deadline`` the adapter may serve many requests over kept-alive connections
    (its pools are keyed by the address in the URL, so a connection only ever carries
    requests to the address it was opened to); each request then runs inside
    :func:`request_deadline`.
    """

    def __init__(self, hostname: str, deadline: float = math.inf, **kwargs: Any) -> None:
        self._hostname = hostname
        self._deadline = deadline
        super().__init__(max_retries=0, **kwargs)

    def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
        """Make SNI and certificate matching use the original host name; bound by the deadline."""
        pool_kwargs["server_hostname"] = self._hostname
        pool_kwargs["assert_hostname"] = self._hostname
        super().init_poolmanager(*args, **pool_kwargs)
        # The pool manager only calls these (``pool_cls(host, port, **context)``).
        self.poolmanager.pool_classes_by_scheme = {
            "http": functools.partial(_DeadlineHTTPPool, attempt_deadline=self._deadline),  # type: ignore[dict-item]
            "https": functools.partial(_DeadlineHTTPSPool, attempt_deadline=self._deadline),  # type: ignore[dict-item]
        }


def pinned_url(resolved: ResolvedDestination) -> tuple[str, str]:
    """The URL with the checked address in place of the host, and the ``Host`` header."""
    dest = resolved.destination
    address = f"[{resolved.address}]" if ":" in resolved.address else resolved.address
    default_port = 443 if dest.scheme == "https" else 80
    name = f"[{dest.host}]" if ":" in dest.host else dest.host
    host_header = name if dest.port == default_port else f"{name}:{dest.port}"
    prefix_len = dest.url.index("/", len(dest.scheme) + 3)
    return f"{dest.scheme}://{address}:{dest.port}{dest.url[prefix_len:]}", host_header
