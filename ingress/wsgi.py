"""WSGI entry point for gunicorn: ``ingress.wsgi:application``.

The app is built lazily in each gunicorn worker (after fork), never at import time of
library code, with the ingress role's settings (no master key).
"""

from __future__ import annotations

from typing import Any

from infra.bootstrap import bootstrap
from infra.settings import Settings
from ingress.app import create_app

_app: Any = None


def application(environ: dict[str, Any], start_response: Any) -> Any:
    """Build the app on first request in this process, then delegate to it."""
    global _app
    if _app is None:
        _app = create_app(bootstrap(Settings.from_env(), "ingress"))
    return _app(environ, start_response)
