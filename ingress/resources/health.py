"""``GET /health`` (liveness) and ``GET /ready`` (database and broker reachable)."""

from __future__ import annotations

import falcon
from sqlalchemy import text

from infra.errors import GRPC_UNAVAILABLE
from infra.messaging.broker import ping
from infra.services import Services


class HealthResource:
    """The process is up."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"status": "ok"}


class ReadyResource:
    """Dependencies answer; 503 with what failed otherwise."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        checks: dict[str, str] = {}
        try:
            with self.services.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            checks["database"] = "ok"
        except Exception as ex:
            checks["database"] = f"unreachable: {type(ex).__name__}"
        try:
            ping(self.services.broker)
            checks["broker"] = "ok"
        except Exception as ex:
            checks["broker"] = f"unreachable: {type(ex).__name__}"
        ok = all(v == "ok" for v in checks.values())
        resp.status = falcon.HTTP_200 if ok else falcon.HTTP_503
        resp.media = {"status": "ready" if ok else "unavailable", "checks": checks}
        if not ok:  # an error answer carries the wire error fields too (UNAVAILABLE, 14)
            down = ", ".join(f"{name} {state}" for name, state in checks.items() if state != "ok")
            resp.media |= {"code": GRPC_UNAVAILABLE, "message": f"not ready: {down}", "details": []}
