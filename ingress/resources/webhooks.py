"""``GET /public/v1/discovery/webhooks/jwks``: the public keys webhook signatures verify with.

Unauthenticated, as at Turnkey (PROTOCOL.md §9). The keys come from the database, where the
notifier publishes the public half of its ring; the ingress never reads private keys.
"""

from __future__ import annotations

import falcon

from infra.clock import now_ms
from infra.services import Services
from infra.webhooks.jwks import CACHE_CONTROL, JWKS_PATH
from infra.webhooks.keystore import jwks_from_database


class WebhookJwksResource:
    """The JWKS document with Turnkey's ``Cache-Control``."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self.services.session_factory() as session:
            resp.media = jwks_from_database(session, now_ms=now_ms())
        resp.set_header("Cache-Control", CACHE_CONTROL)


def add(app: falcon.App, services: Services) -> None:
    """Register the JWKS route on ``app``."""
    app.add_route(JWKS_PATH, WebhookJwksResource(services))
