"""Auth proxy configuration as activities: enable, update, disable, query, and what the
proxy user may do (only sign-up, OTP, OAuth and login)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.crypto import hpke
from tests.e2e.auth_proxy.conftest import Proxied
from tests.support.auth_proxy import config_body, proxy_api_key, read_config
from tests.support.deployment import make_organization
from tests.support.keys import make_key
from tests.support.raw_api import RawApi, root_user_params

SWAGGER_FIELDS = {
    "allowedOrigins", "allowedAuthMethods", "sendFromEmailAddress", "replyToEmailAddress",
    "emailAuthTemplateId", "otpTemplateId", "emailCustomizationParams", "smsCustomizationParams",
    "walletKitSettings", "otpExpirationSeconds", "verificationTokenExpirationSeconds",
    "sessionExpirationSeconds", "otpAlphanumeric", "otpLength", "sendFromEmailSenderName",
    "verificationTokenRequiredForGetAccountPii", "socialLinkingClientIds", "captchaEnabled",
}

EVERY_FIELD: dict[str, Any] = {
    "allowedOrigins": ["https://app.example.com", "http://localhost:3000"],
    "allowedAuthMethods": ["email", "google"],
    "sendFromEmailAddress": "login@example.com",
    "replyToEmailAddress": "help@example.com",
    "emailAuthTemplateId": "tmpl-email",
    "otpTemplateId": "tmpl-otp",
    "emailCustomizationParams": {"appName": "Example", "logoUrl": "https://example.com/l.png"},
    "smsCustomizationParams": {"template": "Your code is {{.OtpCode}}"},
    "walletKitSettings": {"enabledSocialProviders": ["google"],
                          "oauthClientIds": {"google": "client-123"},
                          "oauthRedirectUrl": "https://app.example.com/oauth"},
    "otpExpirationSeconds": 120,
    "verificationTokenExpirationSeconds": 600,
    "sessionExpirationSeconds": 1800,
    "otpAlphanumeric": False,
    "otpLength": 6,
    "sendFromEmailSenderName": "Example Login",
    "verificationTokenRequiredForGetAccountPii": True,
    "socialLinkingClientIds": ["client-123"],
    "captchaEnabled": False,
}


@pytest.fixture
def org(proxied: Proxied) -> RawApi:
    """A fresh top-level organization whose root user configures its proxy."""
    key = make_organization(proxied.dep, "proxy tenant")
    return RawApi(proxied.dep, key, key.organization_id)


def _config(api: RawApi) -> dict[str, Any]:
    return api.read("get_auth_proxy_config")["config"]  # type: ignore[no-any-return]


def test_enable_creates_the_proxy_user_and_a_config_with_every_field(org: RawApi) -> None:
    result = org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    config = _config(org)
    assert config["userId"] == result["userId"] and config["enabled"] is True
    assert set(config) >= SWAGGER_FIELDS
    assert config["allowedOrigins"] == ["*"]
    user = org.read("get_user", {"userId": result["userId"]})["user"]
    assert [k["credential"]["type"] for k in user["apiKeys"]] == ["CREDENTIAL_TYPE_API_KEY_P256"]
    names = {p["policyName"] for p in org.read("list_policies")["policies"]}
    assert {"Auth proxy: authentication activities", "Auth proxy: nothing else"} <= names


def test_update_sets_every_field_and_keeps_what_is_not_sent(org: RawApi) -> None:
    org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    config_id = _config(org)["configId"]
    result = org.ok("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG",
                    EVERY_FIELD)
    assert result == {"configId": config_id}
    config = _config(org)
    for name, value in EVERY_FIELD.items():
        assert config[name] == value, name
    org.ok("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {"otpLength": 8})
    config = _config(org)
    assert config["otpLength"] == 8 and config["allowedOrigins"] == EVERY_FIELD["allowedOrigins"]


@pytest.mark.parametrize("bad", [{"otpLength": 12}, {"allowedOrigins": ["https://a.com/path"]},
                                 {"allowedAuthMethods": ["telepathy"]},
                                 {"otpExpirationSeconds": 3600}])
def test_bad_updates_are_refused_with_the_field(org: RawApi, bad: dict[str, Any]) -> None:
    org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    response = org.submit("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", bad)
    assert response.status_code == 400, response.text
    assert next(iter(bad)) in response.text


def test_update_before_enable_says_to_enable(org: RawApi) -> None:
    response = org.submit("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG",
                          {"otpLength": 6})
    assert response.status_code == 404 and "enable_auth_proxy" in response.json()["message"]


def test_disable_then_enable_turns_the_same_config_back_on(org: RawApi) -> None:
    user_id = org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})["userId"]
    assert org.ok("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {}) == {}
    assert _config(org)["enabled"] is False
    assert org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})["userId"] == user_id
    assert _config(org)["enabled"] is True


def test_only_the_root_quorum_configures_the_proxy(org: RawApi) -> None:
    key = make_key()
    org.ok("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [
        {"userName": "member", "apiKeys": [key.api_key_params("member")], "authenticators": [],
         "userTags": []}]})
    member = RawApi(org.dep, key, org.organization_id)
    for path, type_ in (("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY"),
                        ("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG")):
        if path == "update_auth_proxy_config":
            org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
        response = member.submit(path, type_, {})
        assert response.status_code == 403, response.text


def test_the_proxy_user_can_sign_up_users_and_nothing_else(org: RawApi) -> None:
    org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    config = _config(org)
    wallet = org.ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
        "walletName": "treasury", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
    proxy = RawApi(org.dep, proxy_api_key(org.dep, config["configId"]), org.organization_id)
    refused = [
        ("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": wallet["addresses"][0], "payload": "00" * 32,
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"}),
        ("export_wallet", "ACTIVITY_TYPE_EXPORT_WALLET", {
            "walletId": wallet["walletId"],
            "targetPublicKey": hpke.uncompressed(hpke.generate_private_key().public_key()).hex()}),
        ("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [
            {"userName": "intruder", "apiKeys": [make_key().api_key_params("x")],
             "authenticators": [], "userTags": []}]}),
        ("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
            "userId": config["userId"], "apiKeys": [make_key().api_key_params("more")]}),
        ("update_organization_name", "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME",
         {"organizationName": "taken over"}),
        ("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
         {"name": "FEATURE_NAME_WEBAUTHN_ORIGINS", "value": "https://evil.example"}),
        ("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {}),
        ("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG",
         {"allowedOrigins": ["*"]}),
    ]
    for path, type_, params in refused:
        response = proxy.submit(path, type_, params)
        assert response.status_code == 403, (path, response.text)
    # Positive control: the same key signs a user up (a sub-organization).
    signup = proxy.ok("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        "subOrganizationName": "signed up", "rootUsers": [root_user_params("new user")],
        "rootQuorumThreshold": 1})
    assert signup["subOrganizationId"]


def test_only_the_proxy_key_reads_a_configuration(org: RawApi) -> None:
    org.ok("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
    config_id = _config(org)["configId"]
    body = config_body(config_id)
    unstamped = org.dep.post("/public/v1/auth_proxy/config", body)
    assert unstamped.status_code == 401 and set(unstamped.json()) >= {"code", "message"}
    other = org.dep.post("/public/v1/auth_proxy/config", body, {"X-Stamp": make_key().stamp(body)})
    assert other.status_code == 403
    answer = read_config(org.dep, config_id)
    assert answer.status_code == 200
    assert answer.json()["config"]["configId"] == config_id
    # The sealed key is an HPKE bundle, not the key itself.
    sealed = json.loads(answer.json()["config"]["sealedApiKey"])
    assert set(sealed) == {"encappedPublic", "ciphertext"}
    assert read_config(org.dep, "00000000-0000-4000-8000-000000000000").status_code == 404
