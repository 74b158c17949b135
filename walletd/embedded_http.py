"""``walletd up``'s HTTP server: waitress in this process (threads, keep-alive).

waitress receives a whole request before the app sees it, so bodies are bounded here: up to
twice the API's limit the app answers (a 400 in the wire format, ``ingress.resources.api``);
beyond it, and for requests waitress cannot parse, waitress answers itself, in the wire
error format too (``{code, message, details}``) rather than its plain-text page. Forwarded
headers are left to ``ingress.middleware`` (``WALLETD_TRUSTED_PROXY_HOPS``).
"""

from __future__ import annotations

import json
from typing import Any

from waitress import create_server
from waitress.channel import HTTPChannel
from waitress.task import ErrorTask

from infra.errors import InvalidRequest
from ingress.resources.api import MAX_BODY

#: The largest body waitress accepts before refusing it unread (413).
MAX_REQUEST_BODY = 2 * MAX_BODY


class _WireErrorTask(ErrorTask):
    """waitress's own refusals (malformed request line or headers, too large) as the wire
    error body, with waitress's status."""

    def execute(self) -> None:
        error = self.request.error
        body = json.dumps(InvalidRequest(f"{error.reason}: {error.body}").to_wire()).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(HTTPChannel):
    error_task_class = _WireErrorTask


def server(app: Any, host: str, port: int, threads: int) -> Any:
    """A waitress server for ``app`` on ``host:port`` (``.run()`` serves, ``.close()`` stops
    accepting, ``.task_dispatcher.shutdown()`` waits for the requests in flight)."""
    created = create_server(app, host=host, port=port, threads=threads, ident="walletd",
                            clear_untrusted_proxy_headers=False,
                            max_request_body_size=MAX_REQUEST_BODY)
    created.channel_class = _Channel
    return created
