"""``create_app(settings)``: the auth proxy as a WSGI app (``walletd auth-proxy``).

``POST /v1/<name>`` for every path of the auth proxy swagger (``authproxy.routes``), behind
the gate (``authproxy.gate``: CORS, rate limits, the configuration). Errors are the wire
body ``{code, message, details}``; an error the API answered comes back as it came.
"""

from __future__ import annotations

import json
from typing import Any

import falcon

from authproxy import routes
from authproxy.gate import Gate, check_rate, config_of, set_retry_after
from authproxy.upstream import Forwarded, Upstream
from infra.authproxy import invalidation
from infra.authproxy.keys import ProxyKey
from infra.errors import WalletError
from infra.ratelimit import Limiter, from_url
from infra.settings import Settings
from infra.submit_body import parse_json_object
from ingress import errors
from ingress.resources.api import read_body

#: OTP initiations are limited per contact over this many seconds.
CONTACT_WINDOW_S = 180.0


class ProxyResource:
    """``POST /v1/{name}``."""

    def __init__(self, upstream: Upstream, limiter: Limiter, contact_limit: int) -> None:
        self.upstream = upstream
        self.limiter = limiter
        self.contact_limit = contact_limit

    def on_post(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        handler = routes.ROUTES.get(name)
        if handler is None:
            raise falcon.HTTPNotFound(description=f"unknown auth proxy path /v1/{name}")
        raw = read_body(req)
        body: dict[str, Any] = {} if name in routes.EMPTY_BODY and not raw.strip() else (
            parse_json_object(raw))
        config = config_of(req)
        if name in routes.OTP_INITIATIONS and isinstance(body.get("contact"), str):
            check_rate(self.limiter,
                       f"authproxy:contact:{config.id}:{body['contact'].strip().lower()}",
                       self.contact_limit, CONTACT_WINDOW_S, "for this contact")
        resp.content_type = falcon.MEDIA_JSON
        resp.text = json.dumps(handler(self.upstream, config, body))


class Health:
    """``GET /health``: the process is up (no configuration needed)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"status": "ok"}


def _forwarded(req: falcon.Request, resp: falcon.Response, ex: Forwarded,
               params: dict[str, Any]) -> None:
    """The API's own error answer, status and payload unchanged."""
    resp.status = falcon.code_to_http_status(ex.status)
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(ex.body)


def _wallet_error(req: falcon.Request, resp: falcon.Response, ex: WalletError,
                  params: dict[str, Any]) -> None:
    errors.handle_wallet_error(req, resp, ex, params)
    set_retry_after(resp, ex)


def create_app(settings: Settings, *, upstream: Upstream | None = None,
               limiter: Limiter | None = None, proxy_key: ProxyKey | None = None) -> falcon.App:
    """The auth proxy app for ``settings`` (its key from the seal, the API URL, the rate
    limits); ``walletd up`` passes the key of its own, already unsealed, process."""
    upstream = upstream or Upstream(settings.effective_api_url,
                                    proxy_key or ProxyKey.load(settings),
                                    settings.auth_proxy_config_ttl_s)
    limiter = limiter or from_url(settings.effective_rate_limit_url)
    invalidation.subscribe(upstream.forget, settings.effective_rate_limit_url)
    app = falcon.App(middleware=[Gate(upstream, limiter, settings.auth_proxy_rate_address)],
                     cors_enable=False)
    app.req_options.strip_url_path_trailing_slash = True
    app.add_route("/health", Health())
    app.add_route("/v1/{name}", ProxyResource(upstream, limiter, settings.auth_proxy_rate_contact))
    errors.register(app)
    app.add_error_handler(WalletError, _wallet_error)
    app.add_error_handler(Forwarded, _forwarded)
    return app
