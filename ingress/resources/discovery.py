"""``GET /public/v1/discovery/keys`` (no stamp): the service's public keys."""

from __future__ import annotations

import falcon

from infra.discovery import discovery_keys
from infra.services import Services


class DiscoveryKeysResource:
    """Publishes ``signerPublicKey`` and the keys other concepts register.

    A section that cannot answer yet raises (``Unavailable``: 503, wire body, ``no-store``).
    """

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        # An error (503 while the signer does not exist yet) must never be cached.
        resp.cache_control = ["no-store"]
        with self.services.session_factory() as session:
            resp.media = discovery_keys(session)
        resp.cache_control = ["public", "max-age=300"]
