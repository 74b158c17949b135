"""``POST /public/v1/submit/<path>`` and ``POST /public/v1/query/<path>``."""

from __future__ import annotations

import json

import falcon

from infra.errors import InvalidRequest
from infra.pipeline.submit import submit_json
from infra.queries_service import query
from infra.services import Services

MAX_BODY = 4 * 1024 * 1024


def read_body(req: falcon.Request) -> bytes:
    """The raw body bytes exactly as sent (stamps are verified over them).

    Read once: a middleware that needed the body first left it in ``req.context.body``.
    """
    kept: bytes | None = req.context.get("body")
    if kept is not None:
        return kept
    length = req.content_length
    if length is not None and length > MAX_BODY:
        raise InvalidRequest(f"request body exceeds {MAX_BODY} bytes")
    body: bytes = req.bounded_stream.read(MAX_BODY + 1)
    if len(body) > MAX_BODY:
        raise InvalidRequest(f"request body exceeds {MAX_BODY} bytes")
    return body


def _headers(req: falcon.Request) -> dict[str, str]:
    return {k.lower(): v for k, v in req.headers.items()}


class SubmitResource:
    """Activities: authenticate, store, wait briefly, answer ``{"activity": …}``."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_post(self, req: falcon.Request, resp: falcon.Response, path: str) -> None:
        resp.content_type = falcon.MEDIA_JSON
        resp.text = submit_json(self.services, path, _headers(req), read_body(req),
                                req.context.get("body_object"))


class QueryResource:
    """Reads."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_post(self, req: falcon.Request, resp: falcon.Response, path: str) -> None:
        result = query(self.services, path, _headers(req), read_body(req),
                       req.context.get("body_object"))
        resp.content_type = falcon.MEDIA_JSON
        resp.text = json.dumps(result)
