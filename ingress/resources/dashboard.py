"""``/dashboard``: the operator dashboard (static ES modules, no build step).

The page holds no secret and the server renders nothing: the browser signs in (one-time
link from ``walletd dashboard-link``, or a passkey), makes its own P-256 session key with
WebCrypto, and stamps every query and activity itself (PROTOCOL.md §1).
"""

from __future__ import annotations

from importlib import resources

import falcon

from infra.services import Services

_JS = "text/javascript; charset=utf-8"
#: Every file the page may load (nothing else under ingress/dashboard/ is served).
FILES = {"index.html": falcon.MEDIA_HTML, "style.css": "text/css; charset=utf-8",
         **{f"{name}.js": _JS for name in (
             "app", "api", "stamp", "ui", "eth", "intent", "activities", "wallets", "users",
             "policies", "overview", "settings", "hpke")}}
#: The page may run only its own scripts and talk only to this origin.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")


def _read(name: str) -> bytes:
    return resources.files("ingress").joinpath("dashboard", name).read_bytes()


class DashboardResource:
    """``GET /dashboard`` and ``GET /dashboard/<file>``."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str = "index.html") -> None:
        if name not in FILES:
            raise falcon.HTTPNotFound(description=f"no dashboard file {name}")
        resp.content_type = FILES[name]
        resp.data = _read(name)
        resp.set_header("Content-Security-Policy", CSP)
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Referrer-Policy", "no-referrer")
        resp.cache_control = ["no-cache"]


def add(app: falcon.App, services: Services) -> None:
    resource = DashboardResource()
    app.add_route("/dashboard", resource)
    app.add_route("/dashboard/{name}", resource)
