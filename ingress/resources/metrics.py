"""``GET /metrics``: the Prometheus page of this role (see ``infra.observability.metrics``).

Not public: with ``WALLETD_METRICS_TOKEN`` set it answers only ``Authorization: Bearer
<token>``; without one, only a local scraper: a loopback peer whose request carries no
forwarding header (``X-Forwarded-For``, ``Forwarded``, ``X-Real-IP``). Behind a proxy or
sidecar on the same host every client's peer is loopback; the header the proxy adds is what
says the request came from elsewhere, so such a request needs the token like any remote one.
Worker roles serve it on their own ``WALLETD_METRICS_PORT``. The page's database gauges are
read at most once per ``STATE_TTL_S`` per process, so scraping cannot load the database.
"""

from __future__ import annotations

import hmac
import ipaddress

import falcon

from infra.errors import NotFound, PermissionDenied, Unauthenticated
from infra.services import Services

#: Headers a proxy adds for the client it forwards: their presence makes a request remote.
FORWARDING_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP")


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def forwarded(req: falcon.Request) -> bool:
    """Whether a proxy says it forwarded ``req`` for another client (any forwarding header,
    whatever its value)."""
    return any(req.get_header(name) is not None for name in FORWARDING_HEADERS)


class MetricsResource:
    """Every metric this deployment's ingress (or ``walletd up``) holds, plus queue and
    webhook gauges read at scrape time."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        from infra.observability.metrics import exposition

        token = self.services.settings.metrics_token
        if token:
            given = (req.get_header("Authorization") or "").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(given.encode(), token.encode()):
                raise Unauthenticated("/metrics needs Authorization: Bearer <WALLETD_METRICS_TOKEN>")
        elif not _loopback(req.remote_addr or ""):
            raise NotFound("no such path: /metrics is served to loopback peers only unless "
                           "WALLETD_METRICS_TOKEN is set")
        elif forwarded(req):
            raise PermissionDenied("/metrics: a forwarded request (X-Forwarded-For, Forwarded or "
                                   "X-Real-IP) counts as remote and needs Authorization: Bearer "
                                   "<WALLETD_METRICS_TOKEN>, which is not set")
        body, content_type = exposition(self.services)
        resp.content_type = content_type
        resp.data = body
