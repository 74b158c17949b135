"""``create_app(services)``: routes, middleware and error handlers in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from infra.activities import registry
from infra.services import Services
from ingress import errors
from ingress.middleware import ClientOrigin, Cors, RateLimit, RequestContext
from ingress.resources import auth_proxy, dashboard, webhooks
from ingress.resources.api import QueryResource, SubmitResource
from ingress.resources.audit import AuditCheckpointResource, AuditConsistencyResource
from ingress.resources.discovery import DiscoveryKeysResource
from ingress.resources.health import HealthResource, ReadyResource
from ingress.resources.metrics import MetricsResource
from ingress.resources.openapi import OpenApiResource


def create_app(services: Services,
               seal_statuses: Callable[[], list[dict[str, Any]]] | None = None) -> falcon.App:
    """The public API as a WSGI app."""
    # Import every activity module now, not inside the first request of each worker.
    registry()
    middleware: list[Any] = [RequestContext(), Cors(), RateLimit(services),
                             ClientOrigin(services)]
    app = falcon.App(middleware=middleware, cors_enable=False)
    app.req_options.strip_url_path_trailing_slash = True
    app.add_route("/public/v1/submit/{path}", SubmitResource(services))
    app.add_route("/public/v1/query/{path}", QueryResource(services))
    app.add_route("/health", HealthResource())
    # `walletd up` passes its own seal: the embedded process is a worker too (docs/CUSTODY.md)
    app.add_route("/ready", ReadyResource(services, seal_statuses))
    app.add_route("/metrics", MetricsResource(services))
    app.add_route("/public/v1/discovery/keys", DiscoveryKeysResource(services))
    app.add_route("/public/v1/audit/checkpoint", AuditCheckpointResource(services))
    app.add_route("/public/v1/audit/consistency", AuditConsistencyResource(services))
    app.add_route("/public/v1/openapi.json", OpenApiResource())
    webhooks.add(app, services)
    auth_proxy.add(app, services)
    dashboard.add(app, services)
    errors.register(app)
    return app
