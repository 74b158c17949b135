"""Bounded work per request (issue 19 item 6): an array over its cap is a 400 before anything
is stored, so no request can buy seconds of a signing thread or megabytes of result."""

from __future__ import annotations

from typing import Any

import pytest

from infra.validation import caps
from tests.e2e.abuse.conftest import World
from tests.e2e.auth_proxy.conftest import Tenant
from tests.support.keys import make_key

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


def _count(tenant: Tenant) -> int:
    return len(tenant.api.read("list_activities")["activities"])


@pytest.mark.parametrize(("path", "type_", "parameters"), [
    ("sign_raw_payloads", "ACTIVITY_TYPE_SIGN_RAW_PAYLOADS", lambda n: {
        "signWith": "0x0000000000000000000000000000000000000001", "payloads": ["00"] * n,
        "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"}),
    ("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", lambda n: {
        "walletName": "huge", "accounts": [ETH] * n}),
    ("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", lambda n: {
        "users": [{"userName": f"u{i}", "apiKeys": [], "authenticators": [],
                   "oauthProviders": [], "userTags": []} for i in range(n)]}),
    ("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", lambda n: {
        "userId": "00000000-0000-0000-0000-000000000000",
        "apiKeys": [make_key().api_key_params(f"k{i}") for i in range(n)]}),
    ("create_policies", "ACTIVITY_TYPE_CREATE_POLICIES", lambda n: {
        "policies": [{"policyName": f"p{i}", "effect": "EFFECT_ALLOW", "notes": ""}
                     for i in range(n)]}),
])
def test_an_array_over_its_cap_is_refused_before_anything_is_stored(
        world: World, tenant: Tenant, path: str, type_: str, parameters: Any) -> None:
    cap = {"sign_raw_payloads": caps.PAYLOADS, "create_wallet": caps.ACCOUNTS,
           "create_users": caps.USERS, "create_api_keys": caps.CREDENTIALS_PER_USER,
           "create_policies": caps.POLICIES}[path]
    before = _count(tenant)
    refused = tenant.api.submit(path, type_, parameters(cap + 1))
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert set(body) == {"code", "message", "details"}
    assert f"at most {cap}" in body["message"] or str(cap) in refused.text
    assert _count(tenant) == before
