"""``GET /health`` (liveness) and ``GET /ready`` (database and broker reachable; for worker
roles, unsealed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon
from sqlalchemy import text

from infra.errors import GRPC_UNAVAILABLE
from infra.messaging.broker import ping
from infra.seal.wiring import seal_statuses as wiring_seal_statuses
from infra.services import Services


class HealthResource:
    """The process is up."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"status": "ok"}


class ReadyResource:
    """Dependencies answer; 503 with what failed otherwise."""

    def __init__(self, services: Services,
                 seal_statuses: Callable[[], list[dict[str, Any]]] | None = None) -> None:
        self.services = services
        # a worker role's seal (its own, or its child processes' for `walletd worker -p N`)
        self.seal_statuses = seal_statuses or (lambda: wiring_seal_statuses(services))

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
        statuses = self.seal_statuses()  # worker roles: a sealed worker is not ready
        if statuses:
            sealed = [s for s in statuses if s.get("sealed")]
            checks["seal"] = "ok" if not sealed else f"sealed ({sealed[0].get('reason') or 'sealed'})"
        ok = all(v == "ok" for v in checks.values())
        resp.status = falcon.HTTP_200 if ok else falcon.HTTP_503
        resp.media = {"status": "ready" if ok else "unavailable", "checks": checks}
        if not ok:  # an error answer carries the wire error fields too (UNAVAILABLE, 14)
            down = ", ".join(f"{name} {state}" for name, state in checks.items() if state != "ok")
            resp.media |= {"code": GRPC_UNAVAILABLE, "message": f"not ready: {down}", "details": []}
