"""Requests the swagger forbids are 400s with the wire body, never 200s or 500s (issue 15).

Each case was answered 200 (or 500) before: duplicate address formats (stored as a flush
error that left the activity PENDING for ever), an empty key name raised by a model inside
``check``, and fields the swagger requires, types or enumerates.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests

from tests.support.deployment import Deployment
from tests.support.raw_api import RawApi, stamp_headers

ETH = "ADDRESS_FORMAT_ETHEREUM"


def _api(dep: Deployment) -> RawApi:
    return RawApi(dep, dep.root, dep.root.organization_id)


def _refused(response: requests.Response, field: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == {"code", "message", "details"} and body["code"] == 3
    assert field in json.dumps(body), body
    return body  # type: ignore[no-any-return]


def test_duplicate_address_formats_are_400(deployment: Deployment) -> None:
    response = _api(deployment).submit("create_private_keys", "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", {
        "privateKeys": [{"privateKeyName": f"dup {time.time_ns()}", "curve": "CURVE_SECP256K1",
                         "privateKeyTags": [], "addressFormats": [ETH, ETH]}]})
    assert "listed twice" in _refused(response, "privateKeys[0].addressFormats")["message"]


def test_duplicate_wallet_accounts_are_400(deployment: Deployment) -> None:
    account = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
               "path": "m/44'/60'/0'/0/0", "addressFormat": ETH}
    response = _api(deployment).submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
        "walletName": f"dup {time.time_ns()}", "accounts": [account, account]})
    _refused(response, "accounts[1]")


def test_empty_import_key_name_is_400_not_500(deployment: Deployment) -> None:
    # The name is checked by a model built inside ``check``: its ValidationError was a 500.
    response = _api(deployment).submit("import_private_key", "ACTIVITY_TYPE_IMPORT_PRIVATE_KEY", {
        "userId": deployment.root.user_id, "privateKeyName": "", "encryptedBundle": "{}",
        "curve": "CURVE_SECP256K1", "addressFormats": [ETH]})
    _refused(response, "privateKeyName")


def test_feature_without_value_is_400(deployment: Deployment) -> None:
    response = _api(deployment).submit(
        "set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
        {"name": "FEATURE_NAME_EMAIL_AUTH"})
    _refused(response, "parameters.value")


def test_policy_without_notes_is_400(deployment: Deployment) -> None:
    response = _api(deployment).submit("create_policies", "ACTIVITY_TYPE_CREATE_POLICIES", {
        "policies": [{"policyName": f"no notes {time.time_ns()}", "effect": "EFFECT_ALLOW",
                      "condition": "true"}]})
    _refused(response, "notes")


@pytest.mark.parametrize("path", ["get_api_keys", "get_oauth_providers"])
def test_null_user_id_is_400(deployment: Deployment, path: str) -> None:
    _refused(_api(deployment).query(path, {"userId": None}), "body.userId")


def test_unknown_activity_type_filter_is_400(deployment: Deployment) -> None:
    api = _api(deployment)
    _refused(api.query("list_activities", {"filterByType": ["NOT_A_TYPE"]}), "filterByType")
    _refused(api.query("list_activities", {"filterByStatus": ["NOT_A_STATUS"]}), "filterByStatus")
    # The swagger's values still filter.
    listed = api.read("list_activities", {"filterByType": ["ACTIVITY_TYPE_CREATE_WALLET"],
                                          "filterByStatus": ["ACTIVITY_STATUS_COMPLETED"]})
    assert all(a["type"] == "ACTIVITY_TYPE_CREATE_WALLET" for a in listed["activities"])


@pytest.mark.parametrize("proofs", [{}, "yes", 1, None])
def test_generate_app_proofs_must_be_a_boolean(deployment: Deployment, proofs: object) -> None:
    body = json.dumps({"type": "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
                       "timestampMs": str(time.time_ns() // 1_000_000),
                       "organizationId": deployment.root.organization_id,
                       "parameters": {"userId": deployment.root.user_id, "apiKeys": []},
                       "generateAppProofs": proofs}).encode()
    response = deployment.post("/public/v1/submit/create_api_keys", body,
                               stamp_headers(deployment, deployment.root, body))
    _refused(response, "generateAppProofs")


def test_parameters_are_required(deployment: Deployment) -> None:
    for parameters in ({}, {"parameters": None}):
        body = json.dumps({"type": "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION",
                           "timestampMs": str(time.time_ns() // 1_000_000),
                           "organizationId": deployment.root.organization_id, **parameters}).encode()
        response = deployment.post("/public/v1/submit/delete_sub_organization", body,
                                   stamp_headers(deployment, deployment.root, body))
        _refused(response, "parameters")


@pytest.mark.parametrize("value", [0, 1, "true"])
def test_booleans_are_json_booleans(deployment: Deployment, value: object) -> None:
    # Found by the schema fuzzer: pydantic read 0 as false and answered 200.
    response = _api(deployment).query("list_wallet_accounts", {
        "walletId": "00000000-0000-0000-0000-000000000000", "includeWalletDetails": value})
    _refused(response, "includeWalletDetails")
