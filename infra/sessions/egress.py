"""Outbound HTTP to OIDC issuers and OAuth 2.0 providers, under the webhooks' SSRF rules.

Every request goes through :func:`~infra.webhooks.destinations.parse_destination` and
:func:`~infra.webhooks.destinations.resolve_destination` (https only, public addresses only,
unless ``WALLETD_OIDC_ALLOW`` lists the host or network) and is pinned to the checked address
(:mod:`infra.webhooks.pinned`). Redirects are not followed, proxies from the environment are
ignored, the whole request has a deadline and the body read is capped.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
import urllib3

from infra.errors import Unavailable
from infra.safejson import loads
from infra.webhooks.destinations import (
    AllowList,
    DestinationUnresolved,
    Resolver,
    UnsafeDestination,
    parse_destination,
    resolve_destination,
    system_resolver,
)
from infra.webhooks.pinned import DeadlineExceeded, PinnedAdapter, pinned_url

USER_AGENT = "walletd-oidc/1"
TIMEOUT_S = 5.0
MAX_BODY_BYTES = 256 * 1024


class UpstreamUnavailable(Unavailable):
    """An issuer or provider could not be reached or answered unusably (503)."""

    code = "oidc_upstream_unavailable"


@dataclass(frozen=True)
class Answer:
    """An upstream's answer: status, body (capped) and headers."""

    status: int
    body: bytes
    headers: Mapping[str, str]

    def json(self, what: str) -> Any:
        """The body as JSON.

        Raises:
            UpstreamUnavailable: not JSON.
        """
        try:
            return loads(self.body)
        except Exception as ex:
            raise UpstreamUnavailable(f"{what} did not answer with JSON") from ex


@dataclass(frozen=True)
class Egress:
    """Where requests may go and how names resolve (tests pass a fixed resolver)."""

    allow: AllowList = field(default_factory=AllowList)
    resolver: Resolver = system_resolver
    timeout_s: float = TIMEOUT_S
    #: The setting that lists private or plain-http hosts, named in refusals.
    allow_setting: str = "WALLETD_OIDC_ALLOW"

    @classmethod
    def from_settings(cls, settings: Any) -> Egress:
        """The egress of a process (``WALLETD_OIDC_ALLOW``)."""
        return cls(AllowList.of(getattr(settings, "oidc_allow", ()) or ()))

    def request(self, method: str, url: str, what: str, *, data: Mapping[str, str] | None = None,
                headers: Mapping[str, str] | None = None, body: bytes | None = None) -> Answer:
        """One request to ``url``; ``what`` names the upstream in error messages.

        Raises:
            UnsafeDestination: the URL is not allowed (400; a configuration problem).
            UpstreamUnavailable: resolution, connection, deadline or size limit failed.
        """
        deadline = time.monotonic() + self.timeout_s
        try:
            resolved = resolve_destination(parse_destination(url, self.allow), self.allow,
                                           self.resolver)
        except UnsafeDestination as ex:
            raise UnsafeDestination(f"{what} at {url} is not an allowed destination: {ex.message}"
                                    f" ({self.allow_setting} lists private or plain-http hosts)"
                                    ) from None
        except DestinationUnresolved as ex:
            raise UpstreamUnavailable(f"{what} is unreachable: {ex.message}") from None
        target, host_header = pinned_url(resolved)
        all_headers = {"Accept": "application/json", "User-Agent": USER_AGENT,
                       **(headers or {}), "Host": host_header}
        with requests.Session() as session:
            session.trust_env = False
            session.mount(f"{resolved.destination.scheme}://",
                          PinnedAdapter(resolved.destination.host, deadline))
            try:
                response = session.request(
                    method, target, data=dict(data) if data is not None else body,
                    headers=all_headers, timeout=(self.timeout_s, self.timeout_s),
                    allow_redirects=False, stream=True)
                try:
                    body = response.raw.read(MAX_BODY_BYTES + 1, decode_content=True) or b""
                finally:
                    response.close()
            except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError,
                    DeadlineExceeded) as ex:
                raise UpstreamUnavailable(f"{what} is unreachable ({type(ex).__name__})") from None
        if len(body) > MAX_BODY_BYTES:
            raise UpstreamUnavailable(f"{what} answered with more than {MAX_BODY_BYTES} bytes")
        return Answer(response.status_code, body, dict(response.headers))
