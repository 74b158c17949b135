"""Raw, stamped submits and queries for e2e tests (any stamper, any organization).

The official client covers the happy paths; these helpers build the exact envelope bytes a
client sends, stamp them with an API key (``X-Stamp``) or a software passkey
(``X-Stamp-Webauthn``), and return the HTTP response so tests can assert status codes and
wire error bodies.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import requests

from tests.support.deployment import Deployment, Key
from tests.support.keys import TestKey, make_key
from tests.support.soft_authenticator import SoftAuthenticator

Stamper = Key | TestKey | SoftAuthenticator


def stamp_headers(dep: Deployment, stamper: Stamper, body: bytes) -> dict[str, str]:
    """The stamp header for ``body``."""
    headers = {"Content-Type": "application/json"}
    if isinstance(stamper, SoftAuthenticator):
        headers["X-Stamp-Webauthn"] = stamper.stamp(body)
    elif isinstance(stamper, TestKey):
        headers["X-Stamp"] = stamper.stamp(body)
    else:
        stamp = dep.client(stamper).stamper.stamp(body.decode())
        headers[stamp.stamp_header_name] = stamp.stamp_header_value
    return headers


def envelope(type_: str, organization_id: str, parameters: dict[str, Any]) -> bytes:
    """The submit body, as TS clients serialise it (compact JSON)."""
    return json.dumps(
        {
            "type": type_,
            "timestampMs": str(time.time_ns() // 1_000_000),
            "organizationId": organization_id,
            "parameters": parameters,
        },
        separators=(",", ":"),
    ).encode()


@dataclass
class RawApi:
    """Submits and queries against one deployment as one stamper."""

    dep: Deployment
    stamper: Stamper
    organization_id: str

    def submit(
        self, path: str, type_: str, parameters: dict[str, Any], organization_id: str | None = None
    ) -> requests.Response:
        body = envelope(type_, organization_id or self.organization_id, parameters)
        return self.dep.post(
            f"/public/v1/submit/{path}", body, stamp_headers(self.dep, self.stamper, body)
        )

    def query(self, path: str, body: dict[str, Any] | None = None,
              organization_id: str | None = None) -> requests.Response:
        data = {"organizationId": organization_id or self.organization_id, **(body or {})}
        raw = json.dumps(data).encode()
        return self.dep.post(
            f"/public/v1/query/{path}", raw, stamp_headers(self.dep, self.stamper, raw)
        )

    def ok(self, path: str, type_: str, parameters: dict[str, Any],
           organization_id: str | None = None) -> dict[str, Any]:
        """Submit and require a COMPLETED activity; return its result body."""
        response = self.submit(path, type_, parameters, organization_id)
        assert response.status_code == 200, response.text
        activity = response.json()["activity"]
        assert activity["status"] == "ACTIVITY_STATUS_COMPLETED", activity
        (result,) = activity["result"].values()
        return result  # type: ignore[no-any-return]

    def read(self, path: str, body: dict[str, Any] | None = None,
             organization_id: str | None = None) -> dict[str, Any]:
        """Query and require a 200; return the body."""
        response = self.query(path, body, organization_id)
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]


def root_user_params(name: str, key: TestKey | None = None, **extra: Any) -> dict[str, Any]:
    """``v1RootUserParamsV4`` with one P-256 API key (made if not given)."""
    key = key or make_key()
    return {"userName": name, "apiKeys": [key.api_key_params(f"{name} key")],
            "authenticators": [], "oauthProviders": [], **extra}


def create_sub_org(api: RawApi, name: str, *, users: list[dict[str, Any]] | None = None,
                   threshold: int = 1, **extra: Any) -> tuple[str, TestKey, dict[str, Any]]:
    """A sub-organization with one root user holding a fresh P-256 key."""
    key = make_key()
    result = api.ok("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        "subOrganizationName": name,
        "rootUsers": users or [root_user_params(f"{name} root", key)],
        "rootQuorumThreshold": threshold, **extra})
    return result["subOrganizationId"], key, result
