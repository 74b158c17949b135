"""Malformed requests get the wire error body with the right status, never a 500."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.deployment import Deployment
from tests.support.keys import make_key


def _stamp(dep: Deployment, body: bytes) -> dict[str, str]:
    stamp = dep.client().stamper.stamp(body.decode("utf-8", errors="replace"))
    return {stamp.stamp_header_name: stamp.stamp_header_value}


def _assert_wire_error(response, status: int, code: int) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code and body["message"]
    return body


@pytest.mark.parametrize("body", [b"", b"not json", b"[1,2]", b'{"organizationId": 5}', b"\xff\xfe"])
def test_unparseable_bodies_are_400(deployment: Deployment, body: bytes) -> None:
    response = deployment.post("/public/v1/query/whoami", body, {"X-Stamp": "e30"})
    _assert_wire_error(response, 400, 3)


def test_missing_stamp_is_401(deployment: Deployment) -> None:
    body = json.dumps({"organizationId": deployment.root.organization_id}).encode()
    response = deployment.post("/public/v1/query/whoami", body)
    assert "without a stamp" in _assert_wire_error(response, 401, 16)["message"]


@pytest.mark.parametrize("stamp", ["%%%", "e30", "bm90IGpzb24", "eyJwdWJsaWNLZXkiOjF9"])
def test_malformed_stamp_is_401(deployment: Deployment, stamp: str) -> None:
    body = json.dumps({"organizationId": deployment.root.organization_id}).encode()
    response = deployment.post("/public/v1/query/whoami", body, {"X-Stamp": stamp})
    _assert_wire_error(response, 401, 16)


def test_unknown_organization_is_404(deployment: Deployment) -> None:
    body = json.dumps({"organizationId": "00000000-0000-0000-0000-000000000000"}).encode()
    response = deployment.post("/public/v1/query/whoami", body, _stamp(deployment, body))
    _assert_wire_error(response, 404, 5)


def test_unknown_paths_are_404(deployment: Deployment) -> None:
    body = json.dumps({"organizationId": deployment.root.organization_id}).encode()
    for path in ("/public/v1/query/no_such_query", "/public/v1/submit/no_such_activity", "/nope"):
        _assert_wire_error(deployment.post(path, body, _stamp(deployment, body)), 404, 5)


def _envelope(dep: Deployment, **overrides: object) -> bytes:
    data = {"type": "ACTIVITY_TYPE_CREATE_API_KEYS_V2", "timestampMs": str(int(time.time() * 1000)),
            "organizationId": dep.root.organization_id,
            "parameters": {"userId": dep.root.user_id,
                           "apiKeys": [make_key().api_key_params(expiration_seconds="3600")]}}
    data.update(overrides)
    return json.dumps(data).encode()


@pytest.mark.parametrize("overrides, needle", [
    ({"type": "ACTIVITY_TYPE_CREATE_WALLET"}, "not accepted"),
    ({"type": 7}, "type"),
    ({"timestampMs": "yesterday"}, "timestampMs"),
    ({"parameters": "x"}, "parameters"),
    ({"parameters": {"userId": "u"}}, "apiKeys"),
    ({"parameters": {"userId": "u", "apiKeys": [{"apiKeyName": "k", "publicKey": "zz",
                                                  "curveType": "API_KEY_CURVE_P256"}]}}, "publicKey"),
    ({"parameters": {"userId": "u", "apiKeys": [{"apiKeyName": "k", "publicKey": "02" + "11" * 32,
                                                  "curveType": "API_KEY_CURVE_RSA"}]}}, "curveType"),
])
def test_invalid_envelopes_and_parameters_are_400(deployment: Deployment, overrides: dict,
                                                  needle: str) -> None:
    body = _envelope(deployment, **overrides)
    response = deployment.post("/public/v1/submit/create_api_keys", body, _stamp(deployment, body))
    assert needle in _assert_wire_error(response, 400, 3)["message"]


def test_unknown_user_is_404_and_not_stored_as_success(deployment: Deployment) -> None:
    key = make_key().api_key_params(expiration_seconds="3600")
    body = _envelope(deployment, parameters={"userId": "no-such-user", "apiKeys": [key]})
    response = deployment.post("/public/v1/submit/create_api_keys", body, _stamp(deployment, body))
    _assert_wire_error(response, 404, 5)


def test_cors_preflight_is_answered(deployment: Deployment) -> None:
    import requests

    response = requests.options(deployment.base_url + "/public/v1/submit/create_api_keys", headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-stamp"}, timeout=10)
    assert response.status_code in (200, 204)
    assert response.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert "x-stamp" in response.headers["Access-Control-Allow-Headers"].lower()


def test_health_and_ready(deployment: Deployment) -> None:
    import requests

    assert requests.get(deployment.base_url + "/health", timeout=10).json() == {"status": "ok"}
    ready = requests.get(deployment.base_url + "/ready", timeout=10).json()
    assert ready["checks"] == {"database": "ok", "broker": "ok"}
