"""What every proxy request passes first: CORS, the client-address limit, the configuration.

A browser's preflight carries no ``X-Auth-Proxy-Config-Id``, so it is answered for any
origin; the real request is where the configuration's ``allowedOrigins`` is applied: a
disallowed origin gets 403 with a wire body and no ``Access-Control-Allow-Origin`` (the
page cannot read the answer). An allowed origin is echoed. Requests without an ``Origin``
(servers, curl) are not browsers and pass.
"""

from __future__ import annotations

from typing import Any

import falcon

from authproxy.upstream import Config, Upstream
from infra.authproxy.config import origin_allowed
from infra.errors import InvalidRequest, NotFound, PermissionDenied, ResourceExhausted
from infra.ratelimit import Limiter

CONFIG_HEADER = "X-Auth-Proxy-Config-Id"
ALLOWED_HEADERS = f"Content-Type, {CONFIG_HEADER}, X-Captcha-Token, X-Client-Version"
#: Seconds per client-address window.
ADDRESS_WINDOW_S = 60.0


class RateLimited(ResourceExhausted):
    """Too many requests from one client address or for one contact (429)."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def check_rate(limiter: Limiter, key: str, limit: int, window_s: float, what: str) -> None:
    """Count one request against ``key``; a 429 saying when to retry once over."""
    decision = limiter.hit(key, limit, window_s)
    if not decision.allowed:
        raise RateLimited(f"too many requests {what}; retry in {int(decision.retry_after_s) + 1} "
                          "seconds", decision.retry_after_s)


class Gate:
    """Falcon middleware: preflights, the address limit, the configuration and its origins."""

    def __init__(self, upstream: Upstream, limiter: Limiter, address_limit: int,
                 forwarded_hops: int = 0) -> None:
        self.upstream = upstream
        self.limiter = limiter
        self.address_limit = address_limit
        self.forwarded_hops = max(0, forwarded_hops)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.path == "/health":
            return
        origin = req.get_header("Origin")
        if req.method == "OPTIONS":
            resp.status = falcon.HTTP_204
            resp.set_header("Access-Control-Allow-Origin", origin or "*")
            resp.set_header("Access-Control-Allow-Methods", "POST, OPTIONS")
            resp.set_header("Access-Control-Allow-Headers",
                            req.get_header("Access-Control-Request-Headers") or ALLOWED_HEADERS)
            resp.set_header("Access-Control-Max-Age", "600")
            resp.set_header("Vary", "Origin")
            resp.complete = True
            return
        # Errors before the configuration is known are readable by the page that caused them.
        if origin:
            resp.set_header("Access-Control-Allow-Origin", origin)
            resp.set_header("Vary", "Origin")
        req.context.client_address = forwarded_address(req, self.forwarded_hops)
        check_rate(self.limiter, f"authproxy:address:{req.context.client_address}",
                   self.address_limit, ADDRESS_WINDOW_S, "from this address")
        config_id = (req.get_header(CONFIG_HEADER) or "").strip()
        if not config_id:
            raise InvalidRequest(f"the {CONFIG_HEADER} header is required: send the auth proxy "
                                 "configuration id shown by get_auth_proxy_config")
        config = self.upstream.config(config_id)
        if not config.enabled:
            raise PermissionDenied("the auth proxy is disabled for this configuration; enable it "
                                   "with enable_auth_proxy")
        if not origin_allowed(config.data, origin):
            resp.delete_header("Access-Control-Allow-Origin")
            raise PermissionDenied(f"origin {origin} is not allowed by this auth proxy "
                                   "configuration (allowedOrigins)")
        req.context.config = config


def forwarded_address(req: falcon.Request, hops: int) -> str:
    """The client address: the peer's, or with ``hops`` trusted proxies in front
    (``WALLETD_RATE_LIMIT_FORWARDED_HOPS``, as the API reads it) the entry the nearest
    trusted proxy wrote into ``X-Forwarded-For``; entries further left are the client's own
    claims and are not trusted."""
    peer = req.remote_addr or ""
    if not hops:
        return peer
    forwarded = [a.strip() for a in (req.get_header("X-Forwarded-For") or "").split(",")]
    route = [a for a in forwarded if a] + [peer]
    return route[-(hops + 1)] if len(route) > hops else route[0]


def client_address(req: falcon.Request) -> str:
    """The address the gate counted ``req`` against."""
    return str(getattr(req.context, "client_address", None) or req.remote_addr or "")


def config_of(req: falcon.Request) -> Config:
    """The configuration the gate loaded for ``req``."""
    config: Config | None = getattr(req.context, "config", None)
    if config is None:
        raise NotFound("no auth proxy configuration for this request")
    return config


def set_retry_after(resp: falcon.Response, ex: Any) -> None:
    """``Retry-After`` for a rate-limited answer."""
    if isinstance(ex, RateLimited):
        resp.set_header("Retry-After", str(int(ex.retry_after_s) + 1))
