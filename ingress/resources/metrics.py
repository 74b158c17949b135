"""``GET /metrics``: the Prometheus page of this role (see ``infra.observability.metrics``)."""

from __future__ import annotations

import falcon

from infra.services import Services


class MetricsResource:
    """Every metric this deployment's ingress (or ``walletd up``) holds, plus queue and
    webhook gauges read at scrape time."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        from infra.observability.metrics import exposition

        body, content_type = exposition(self.services)
        resp.content_type = content_type
        resp.data = body
