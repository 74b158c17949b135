"""The one place errors become HTTP responses (``{code, message, details}``)."""

from __future__ import annotations

import json
import logging
from typing import Any

import falcon
import sqlalchemy.exc

from infra.errors import (
    GRPC_ALREADY_EXISTS,
    GRPC_FAILED_PRECONDITION,
    GRPC_INTERNAL,
    GRPC_INVALID_ARGUMENT,
    GRPC_NOT_FOUND,
    GRPC_PERMISSION_DENIED,
    GRPC_RESOURCE_EXHAUSTED,
    GRPC_UNAUTHENTICATED,
    GRPC_UNAVAILABLE,
    WalletError,
)

log = logging.getLogger(__name__)

#: gRPC code -> HTTP status (PROTOCOL.md §3.7).
HTTP_STATUS = {
    GRPC_INVALID_ARGUMENT: falcon.HTTP_400,
    GRPC_FAILED_PRECONDITION: falcon.HTTP_400,
    GRPC_UNAUTHENTICATED: falcon.HTTP_401,
    GRPC_PERMISSION_DENIED: falcon.HTTP_403,
    GRPC_NOT_FOUND: falcon.HTTP_404,
    GRPC_ALREADY_EXISTS: falcon.HTTP_409,
    GRPC_RESOURCE_EXHAUSTED: falcon.HTTP_429,
    GRPC_UNAVAILABLE: falcon.HTTP_503,
    GRPC_INTERNAL: falcon.HTTP_500,
}

#: HTTP status code -> gRPC code for framework errors (unknown route, bad method, …).
GRPC_OF_HTTP = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 409: 6, 413: 3, 415: 3, 429: 8}


def _write(resp: falcon.Response, status: str, body: dict[str, Any]) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(body)


def handle_wallet_error(req: falcon.Request, resp: falcon.Response, ex: WalletError,
                        params: dict[str, Any]) -> None:
    """Translate a WalletError into its HTTP status and wire body."""
    _write(resp, HTTP_STATUS.get(ex.grpc_code, falcon.HTTP_500), ex.to_wire())


def handle_http_error(req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError,
                      params: dict[str, Any]) -> None:
    """Framework errors (404 route, 405 method, …) in the same wire shape."""
    code = GRPC_OF_HTTP.get(ex.status_code, GRPC_INTERNAL)
    message = ex.description or ex.title or str(ex.status)
    _write(resp, str(ex.status), {"code": code, "message": message, "details": []})
    for name, value in dict(ex.headers or {}).items():
        resp.set_header(name, value)


def handle_database_unavailable(req: falcon.Request, resp: falcon.Response,
                                ex: sqlalchemy.exc.DBAPIError, params: dict[str, Any]) -> None:
    """A lost database connection is a 503 the client may retry (the pool reconnects)."""
    if not ex.connection_invalidated and not isinstance(ex, sqlalchemy.exc.OperationalError):
        handle_unexpected(req, resp, ex, params)
        return
    log.warning("database unavailable on %s %s: %s", req.method, req.path, type(ex.orig).__name__)
    _write(resp, falcon.HTTP_503, {"code": GRPC_UNAVAILABLE,
                                   "message": "database temporarily unavailable; retry the request",
                                   "details": []})


def handle_unexpected(req: falcon.Request, resp: falcon.Response, ex: Exception,
                      params: dict[str, Any]) -> None:
    """Anything else is a bug: log it, answer 500 without details."""
    log.exception("unhandled error on %s %s", req.method, req.path)
    _write(resp, falcon.HTTP_500, {"code": GRPC_INTERNAL, "message": "internal error",
                                   "details": []})


def register(app: falcon.App) -> None:
    """Install the handlers (most specific last wins by MRO in Falcon)."""
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(sqlalchemy.exc.DBAPIError, handle_database_unavailable)
    app.add_error_handler(falcon.HTTPError, handle_http_error)
    app.add_error_handler(WalletError, handle_wallet_error)
