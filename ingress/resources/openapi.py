"""``GET /public/v1/openapi.json`` (no stamp): the served operations' OpenAPI document."""

from __future__ import annotations

import falcon

from infra.openapi.document import served_document_bytes


class OpenApiResource:
    """Turnkey's swagger cut down to what this deployment serves (``infra.openapi.document``)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_JSON
        resp.data = served_document_bytes()
        resp.cache_control = ["public", "max-age=300"]
