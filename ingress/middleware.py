"""Cross-cutting HTTP concerns: CORS, the request id."""

from __future__ import annotations

from typing import Any

import falcon

from infra.observability import context

ALLOWED_HEADERS = ("Content-Type, X-Stamp, X-Stamp-Webauthn, X-Stamp-Attested, "
                   "X-Client-Version, X-Session")


class Cors:
    """Answer preflights and add CORS headers (browser SDKs send custom headers)."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.method == "OPTIONS":
            resp.status = falcon.HTTP_204
            resp.complete = True

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        resp.set_header("Access-Control-Allow-Origin", req.get_header("Origin") or "*")
        resp.set_header("Vary", "Origin")
        if req.method == "OPTIONS":
            resp.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            resp.set_header("Access-Control-Allow-Headers",
                            req.get_header("Access-Control-Request-Headers") or ALLOWED_HEADERS)
            resp.set_header("Access-Control-Max-Age", "600")


class RequestContext:
    """Bind a request id (the caller's ``X-Request-Id`` or a new one) for the request's log
    lines and the messages it sends; answer it in ``X-Request-Id``."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        request_id = context.request_id_from(req.get_header("X-Request-Id"))
        req.context.observability = context.bind(request_id=request_id, activity_id=None,
                                                 organization_id=None)
        resp.set_header("X-Request-Id", request_id)

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        tokens = req.context.get("observability")
        if tokens is not None:
            context.unbind(tokens)
