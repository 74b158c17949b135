"""Send HTTP requests from a chosen loopback source address (127.0.0.x).

Linux routes all of 127.0.0.0/8 to loopback, so a client socket bound to 127.0.0.7 reaches
a server on 127.0.0.1 and the server sees 127.0.0.7 as the peer. ``from_address`` makes
every ``requests.post`` in its block (the official ``turnkey-http`` client's transport and
``Deployment.post``) connect from that address.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import requests
from requests.adapters import HTTPAdapter


class _SourceAdapter(HTTPAdapter):
    def __init__(self, host: str) -> None:
        self._source = (host, 0)
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = self._source
        super().init_poolmanager(*args, **kwargs)


@contextmanager
def from_address(host: str) -> Iterator[None]:
    """Every ``requests.post`` inside the block connects from ``host``."""
    session = requests.Session()
    session.mount("http://", _SourceAdapter(host))
    try:
        with mock.patch.object(requests, "post", session.post):
            yield
    finally:
        session.close()
