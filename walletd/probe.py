"""What a worker role answers on ``WALLETD_METRICS_PORT``: ``/metrics``, ``/health``, ``/ready``.

The same resources as the ingress's ``/metrics`` and ``/ready``; ``/health`` reports whether
this role's work is running (its worker threads, or its worker processes for
``walletd worker --processes N``), which a liveness probe restarts the role on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import falcon

from infra.errors import GRPC_UNAVAILABLE
from infra.services import Services
from ingress.resources.health import ReadyResource
from ingress.resources.metrics import MetricsResource

log = logging.getLogger(__name__)


class WorkerHealth:
    """200 while ``alive()``; 503 with the wire error fields once it is not."""

    def __init__(self, alive: Callable[[], bool]) -> None:
        self.alive = alive

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        if self.alive():
            resp.media = {"status": "ok"}
            return
        resp.status = falcon.HTTP_503
        resp.media = {"status": "unavailable", "code": GRPC_UNAVAILABLE,
                      "message": "a worker of this role has stopped; restart the role",
                      "details": []}


def app(services: Services, alive: Callable[[], bool],
        seal_statuses: Callable[[], list[dict[str, Any]]] | None = None) -> falcon.App:
    """The probe's WSGI app."""
    probe = falcon.App()
    probe.add_route("/metrics", MetricsResource(services))
    probe.add_route("/health", WorkerHealth(alive))
    probe.add_route("/ready", ReadyResource(services, seal_statuses))
    return probe


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


def serve(services: Services, alive: Callable[[], bool],
          seal_statuses: Callable[[], list[dict[str, Any]]] | None = None) -> WSGIServer | None:
    """Serve the probe on ``settings.host:settings.metrics_port`` in a daemon thread (none
    when the port is 0). Stop it with ``shutdown()``."""
    port = services.settings.metrics_port
    if not port:
        return None
    server = make_server(services.settings.host, port, app(services, alive, seal_statuses),
                         server_class=_Server, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="walletd-probe", daemon=True).start()
    log.info("metrics and health on http://%s:%d", services.settings.host, port)
    return server
