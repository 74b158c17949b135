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
    # ``walletd up`` holds keys in process, so it also reports its seal (docs/CUSTODY.md).
    expected = {"database": "ok", "broker": "ok"}
    if "up" in deployment.processes:
        expected["seal"] = "ok"
    assert ready["checks"] == expected


# -- input that used to reach the database or the interpreter's limits (500 before) -------------

@pytest.mark.parametrize("body", [
    b"[" * 100_000,                                                  # RecursionError in json
    b'{"organizationId": "o", "n": ' + b"1" * 5000 + b"}",          # int over the digit limit
    b'{"organizationId": "o", "p": ' + b'{"a": ' * 100 + b"1" + b"}" * 101,   # too deep
    b'{"organizationId": "o\\u0000"}',                               # NUL: DataError on PostgreSQL
    b'{"organizationId": "o", "x\\u0000": 1}',                       # NUL in a key
    b'{"organizationId": "\\ud800"}',                                # lone surrogate
])
def test_hostile_json_bodies_are_400(deployment: Deployment, body: bytes) -> None:
    for path in ("/public/v1/query/whoami", "/public/v1/submit/create_api_keys"):
        response = deployment.post(path, body, {"X-Stamp": "e30"})
        _assert_wire_error(response, 400, 3)


def test_nul_in_a_stamped_query_field_is_400(deployment: Deployment) -> None:
    body = json.dumps({"organizationId": deployment.root.organization_id,
                       "activityId": "00000000-0000-0000-0000-00000000000\u0000"}).encode()
    response = deployment.post("/public/v1/query/get_activity", body, _stamp(deployment, body))
    body_json = _assert_wire_error(response, 400, 3)
    assert "NUL" in body_json["message"] and "activityId" in body_json["message"]


def _raw_stamp(fields: object) -> str:
    import base64

    raw = fields if isinstance(fields, bytes) else json.dumps(fields).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("stamp", [
    {"publicKey": "02" + "ab" * 32 + "\u0000", "scheme": "SIGNATURE_SCHEME_TK_API_P256",
     "signature": "3006020101020101"},
    {"publicKey": "02" + "ab" * 32, "scheme": "SIGNATURE_SCHEME_TK_API_P256\u0000",
     "signature": "3006020101020101"},
    b"[" * 5000,                                 # headers stay under gunicorn's 8 KiB field limit
    b'{"publicKey": ' + b"1" * 4400 + b"}",
])
def test_hostile_stamps_are_401(deployment: Deployment, stamp: object) -> None:
    body = json.dumps({"organizationId": deployment.root.organization_id}).encode()
    for header in ("X-Stamp", "X-Stamp-Webauthn"):
        response = deployment.post("/public/v1/query/whoami", body, {header: _raw_stamp(stamp)})
        _assert_wire_error(response, 401, 16)


def _submit(dep: Deployment, path: str, body: bytes):  # type: ignore[no-untyped-def]
    return dep.post(f"/public/v1/submit/{path}", body, _stamp(dep, body))


@pytest.mark.parametrize("seconds", ["400000000000", "0", "-5", "1e9", "\u0663\u0660\u0660"])
def test_out_of_range_expiration_is_400_naming_the_range(deployment: Deployment,
                                                         seconds: str) -> None:
    key = make_key().api_key_params("too long", expiration_seconds=seconds)
    body = _envelope(deployment, parameters={"userId": deployment.root.user_id, "apiKeys": [key]})
    message = _assert_wire_error(_submit(deployment, "create_api_keys", body), 400, 3)["message"]
    assert "expirationSeconds" in message and "3153600000" in message


def test_over_long_names_are_400(deployment: Deployment) -> None:
    long_name = "n" * 257
    key = make_key().api_key_params(long_name, expiration_seconds="3600")
    body = _envelope(deployment, parameters={"userId": deployment.root.user_id, "apiKeys": [key]})
    message = _assert_wire_error(_submit(deployment, "create_api_keys", body), 400, 3)["message"]
    assert "apiKeyName" in message and "256" in message

    account = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
               "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}
    for path, type_, parameters, field in [
        ("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
         {"walletName": long_name, "accounts": [account]}, "parameters.walletName"),
        ("update_user", "ACTIVITY_TYPE_UPDATE_USER",
         {"userId": deployment.root.user_id, "userName": long_name}, "parameters.userName"),
        ("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3",
         {"policyName": long_name, "effect": "EFFECT_ALLOW", "notes": ""}, "parameters.policyName"),
    ]:
        body = _envelope(deployment, type=type_, parameters=parameters)
        error = _assert_wire_error(_submit(deployment, path, body), 400, 3)
        violations = [v for d in error["details"] for v in d.get("fieldViolations", [])]
        assert [v["field"] for v in violations] == [field], error
        assert "256" in violations[0]["description"]


def test_zero_padded_timestamp_is_accepted_and_stored_canonically(deployment: Deployment) -> None:
    now_ms = str(int(time.time() * 1000))
    key = make_key()
    body = _envelope(deployment, timestampMs="0" * 40 + now_ms,
                     parameters={"userId": deployment.root.user_id,
                                 "apiKeys": [key.api_key_params("padded", "3600")]})
    response = _submit(deployment, "create_api_keys", body)
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED"


@pytest.mark.parametrize("timestamp", ["9" * 20, "1" * 5000, "\u0661\u0667" + "\u0660" * 11])
def test_out_of_range_timestamps_are_400(deployment: Deployment, timestamp: str) -> None:
    body = _envelope(deployment, timestampMs=timestamp)
    message = _assert_wire_error(_submit(deployment, "create_api_keys", body), 400, 3)["message"]
    assert "timestampMs" in message
