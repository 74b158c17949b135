"""``POST /public/v1/auth_proxy/config``: the auth proxy reads one configuration."""

from __future__ import annotations

import json

import falcon

from infra.authproxy.lookup import PATH, read_config
from infra.services import Services
from ingress.resources.api import read_body


class AuthProxyConfigResource:
    """Answers the proxy (stamped with the proxy key) with a configuration and sealed key."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        headers = {k.lower(): v for k, v in req.headers.items()}
        resp.cache_control = ["no-store"]
        resp.content_type = falcon.MEDIA_JSON
        resp.text = json.dumps(read_config(self.services, headers, read_body(req)))


def add(app: falcon.App, services: Services) -> None:
    app.add_route(PATH, AuthProxyConfigResource(services))
