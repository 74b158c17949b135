"""One webhook delivery attempt: a single HTTP POST, pinned to a checked address.

``attempt_delivery`` checks the URL (``infra.webhooks.destinations``), resolves the host once,
refuses non-public addresses, and connects to exactly the address it checked: the request goes
to ``https://<address>:<port>/path`` while the ``Host`` header, TLS SNI and certificate
hostname check all use the original host name. A second resolution (DNS rebinding) therefore
cannot redirect the connection.

Connect and read timeouts are always set (the pinned transport is
``infra.webhooks.pinned``, shared with the OIDC egress), and the whole attempt has a deadline
(``total_timeout_s``): a read timeout alone bounds each wait for bytes, so a receiver that
drips its answer a byte at a time would never be cut off. Every send and every read of the
response (status line, headers, body excerpt) is given at most the time left until the
deadline, and none starts after it, so no request byte is sent after the deadline and the
attempt ends by it once the request is on its way (resolving the name and the TLS handshake
are bounded by the connect timeout; if they run past the deadline nothing is sent). The
notifier's sending lease is derived from this deadline.

The notifier keeps connections alive per endpoint (:class:`Transports`); the checks above
still run at every attempt and a kept connection only carries requests to the address it was
opened to. Redirects are never followed (a 3xx is the answer); proxies from the environment
are ignored; cookies are never kept.
tenacity retries only failures to *connect*, a few times within about a second, because
nothing was sent then; everything longer is the retry schedule's job. The result is an
:class:`AttemptRecord`, never an exception, except for programming errors.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import requests
import urllib3
from requests.adapters import HTTPAdapter
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)
from urllib3.exceptions import ConnectTimeoutError

from infra.webhooks.destinations import (
    AllowList,
    DestinationUnresolved,
    Resolver,
    UnsafeDestination,
    parse_destination,
    resolve_destination,
    system_resolver,
)
from infra.webhooks.pinned import PinnedAdapter, pinned_url, request_deadline, time_left

USER_AGENT = "walletd-webhooks/1"


@dataclass(frozen=True)
class DeliveryConfig:
    """Knobs of one attempt.

    Attributes:
        connect_timeout_s: Limit on establishing the TCP (and TLS) connection.
        read_timeout_s: Limit on each wait for response bytes.
        total_timeout_s: Deadline of the whole attempt, connection tries included: no
            request byte is sent after it and no response byte is awaited past it.
        transport_attempts: Tries when the connection itself fails (tenacity).
        transport_wait_max_s: Longest pause between those tries.
        excerpt_bytes: How much of the response body is kept.
        verify: TLS verification: ``True`` (system CAs) or a CA bundle path.
    """

    connect_timeout_s: float = 3.0
    read_timeout_s: float = 10.0
    total_timeout_s: float = 15.0
    transport_attempts: int = 3
    transport_wait_max_s: float = 0.5
    excerpt_bytes: int = 1024
    verify: bool | str = True


@dataclass(frozen=True)
class AttemptRecord:
    """What happened on one attempt, as stored on the delivery's attempt log.

    Attributes:
        started_at_ms: Wall-clock start (Unix ms).
        latency_ms: Time from start to the response (or the failure).
        status_code: HTTP status, ``None`` without a response.
        response_excerpt: The first bytes of the response body, decoded leniently.
        error: Why there is no usable response (``None`` when there is one).
        address: The address connected to (``None`` if refused or unresolved).
        retry_after_s: The response's ``Retry-After``, in seconds, when present.
        refused: The destination was refused by the SSRF rules; nothing was sent.
        transport_tries: Connection tries made (1 unless connecting failed).
    """

    started_at_ms: int
    latency_ms: float
    status_code: int | None
    response_excerpt: str = ""
    error: str | None = None
    address: str | None = None
    retry_after_s: float | None = None
    refused: bool = False
    transport_tries: int = 1


def _connect_failed(exc: BaseException) -> bool:
    """True only when the connection was never established, so nothing was sent."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    if not isinstance(exc, requests.exceptions.ConnectionError):
        return False
    reason = exc.args[0] if exc.args else None
    return isinstance(getattr(reason, "reason", reason), ConnectTimeoutError)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP-date); ``None`` if absent
    or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Transports:
    """Kept-alive HTTP connections per endpoint, for the notifier's attempts.

    One :class:`~infra.webhooks.pinned.PinnedAdapter` per endpoint (and host name, which TLS
    checks use), holding at most ``per_endpoint`` connections. The SSRF rules are applied at
    every attempt exactly as without it: the name is resolved and checked, and the request
    goes to the checked address. The adapter's pools are keyed by that address, so a kept
    connection only carries requests to an address that was checked for the request, and a
    name that resolves elsewhere now opens a new connection to the new (checked) address.
    """

    def __init__(self, per_endpoint: int, *, max_endpoints: int = 256) -> None:
        self.per_endpoint = max(1, per_endpoint)
        self.max_endpoints = max_endpoints
        self._lock = threading.Lock()
        self._adapters: OrderedDict[tuple[str, str, str], PinnedAdapter] = OrderedDict()

    def adapter(self, endpoint_id: str, scheme: str, hostname: str) -> PinnedAdapter:
        key = (endpoint_id, scheme, hostname)
        with self._lock:
            adapter = self._adapters.get(key)
            if adapter is not None:
                self._adapters.move_to_end(key)
                return adapter
            adapter = PinnedAdapter(hostname, pool_connections=4, pool_maxsize=self.per_endpoint)
            self._adapters[key] = adapter
            while len(self._adapters) > self.max_endpoints:
                _, old = self._adapters.popitem(last=False)
                old.close()
            return adapter

    def close(self) -> None:
        with self._lock:
            for adapter in self._adapters.values():
                adapter.close()
            self._adapters.clear()


#: Response bytes read past the excerpt so that the connection can be used again; a longer
#: body closes the connection instead.
_DRAIN_BYTES = 65_536


def _post(
    adapter: HTTPAdapter,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    config: DeliveryConfig,
    deadline: float,
) -> tuple[int, str, str | None]:
    left = time_left(deadline)
    prepared = requests.Request("POST", url, data=body, headers=dict(headers)).prepare()
    response = adapter.send(
        prepared,
        stream=True,
        timeout=(min(config.connect_timeout_s, left), min(config.read_timeout_s, left)),
        verify=config.verify,
        proxies={},
    )
    reusable = False
    try:
        # The status is the answer; a body that does not arrive by the deadline is cut short.
        raw = response.raw.read(config.excerpt_bytes, decode_content=True) or b""
        rest = response.raw.read(_DRAIN_BYTES, decode_content=False) or b""
        reusable = len(rest) < _DRAIN_BYTES
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError):
        raw = b""
    finally:
        if reusable:
            response.raw.release_conn()
        else:
            response.close()
    return response.status_code, raw.decode("utf-8", "replace"), response.headers.get("Retry-After")


def attempt_delivery(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    allow: AllowList,
    config: DeliveryConfig | None = None,
    resolver: Resolver = system_resolver,
    transports: Transports | None = None,
    endpoint_id: str = "",
) -> AttemptRecord:
    """POST ``body`` with ``headers`` to ``url`` once (plus short connect retries).

    Args:
        url: The endpoint URL.
        body: Exact body bytes (already signed by the caller).
        headers: The signature headers; ``Content-Type`` and ``User-Agent`` are added.
        allow: Destinations that may be private or plain http.
        config: Timeouts and limits.
        resolver: Name resolution (tests pass a fixed map).
        transports: Kept-alive connections per endpoint (``None``: a connection of its own,
            closed after the attempt).
        endpoint_id: Whose connections to use from ``transports``.
    """
    cfg = config or DeliveryConfig()
    started_ms = time.time_ns() // 1_000_000
    clock = time.perf_counter()
    deadline = time.monotonic() + cfg.total_timeout_s

    def elapsed() -> float:
        return (time.perf_counter() - clock) * 1000.0

    try:
        resolved = resolve_destination(parse_destination(url, allow), allow, resolver)
    except UnsafeDestination as exc:
        return AttemptRecord(started_ms, elapsed(), None, error=exc.message, refused=True)
    except DestinationUnresolved as exc:
        return AttemptRecord(started_ms, elapsed(), None, error=exc.message)

    target, host_header = pinned_url(resolved)
    all_headers = {
        **headers,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Host": host_header,
    }
    tries = 0
    destination = resolved.destination
    own = transports is None
    adapter = (
        PinnedAdapter(destination.host)
        if transports is None
        else transports.adapter(endpoint_id, destination.scheme, destination.host)
    )
    retrying = Retrying(
        retry=retry_if_exception(_connect_failed),
        stop=stop_after_attempt(max(1, cfg.transport_attempts)),
        wait=wait_exponential(multiplier=0.05, max=cfg.transport_wait_max_s),
        reraise=True,
    )
    try:
        with request_deadline(deadline):
            for attempt in retrying:
                with attempt:
                    tries += 1
                    status, excerpt, retry_after = _post(adapter, target, body, all_headers, cfg, deadline)
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        error = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            error = f"deadline of {cfg.total_timeout_s:g} s exceeded ({error})"
        return AttemptRecord(
            started_ms,
            elapsed(),
            None,
            error=error[:500],
            address=resolved.address,
            transport_tries=tries,
        )
    finally:
        if own:
            adapter.close()
    return AttemptRecord(
        started_ms,
        elapsed(),
        status,
        response_excerpt=excerpt,
        address=resolved.address,
        retry_after_s=parse_retry_after(retry_after),
        transport_tries=tries,
    )
