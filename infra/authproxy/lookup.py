"""What the proxy reads about a configuration, and the check that only the proxy reads it.

``POST /public/v1/auth_proxy/config`` with ``{"configId", "timestampMs"}``, stamped
(``X-Stamp``, P-256) with the proxy key itself: the answer carries the proxy user's sealed
API key, which only that key opens, and the settings the proxy enforces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.auth.stamps import MISSING, parse_api_key_stamp
from infra.authproxy import keys
from infra.authproxy.config import render
from infra.clock import now
from infra.crypto.stamp import verify_stamp_signature
from infra.db.models.auth_proxy import AuthProxyConfig
from infra.errors import InvalidRequest, NotFound, PermissionDenied, Unauthenticated
from infra.services import Services
from infra.submit_body import check_fresh, parse_json_object

PATH = "/public/v1/auth_proxy/config"
UNKNOWN = "unknown auth proxy configuration: check X-Auth-Proxy-Config-Id"


def read_config(services: Services, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
    """The configuration ``configId`` names, for the proxy that stamped ``body``.

    Raises:
        Unauthenticated / PermissionDenied: not stamped by the proxy key.
        NotFound: no such configuration.
    """
    header = headers.get("x-stamp")
    if not header:
        raise Unauthenticated(MISSING)
    stamp = parse_api_key_stamp(header)
    if stamp.public_key != keys.compressed_public_key(services.settings):
        raise PermissionDenied("only the auth proxy reads auth proxy configurations")
    verify_stamp_signature(stamp.scheme, stamp.public_key, stamp.signature, body)
    data = parse_json_object(body)
    check_fresh(str(data.get("timestampMs", "")), now())
    config_id = data.get("configId")
    if not isinstance(config_id, str) or not config_id:
        raise InvalidRequest("configId is required", field="configId")
    with services.session_factory() as session:
        row = session.get(AuthProxyConfig, config_id)
        if row is None:
            raise NotFound(UNKNOWN)
        return {"config": {**render(row), "version": row.version,
                           "apiPublicKey": row.api_public_key,
                           "sealedApiKey": row.api_private_key_sealed}}
