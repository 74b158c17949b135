"""Users and their credentials end to end: create_users with passkeys and OAuth providers,
updates, deletion, API keys on all three curves with expiry, OAuth providers, and the
per-user / per-organization limits (429 naming the limit).
"""

from __future__ import annotations

import base64
import json
import time

import pytest

from tests.support.deployment import Deployment, make_organization
from tests.support.keys import make_key
from tests.support.raw_api import RawApi
from tests.support.soft_authenticator import SoftAuthenticator

CURVES = ["API_KEY_CURVE_P256", "API_KEY_CURVE_SECP256K1", "API_KEY_CURVE_ED25519"]


@pytest.fixture
def org(deployment: Deployment) -> RawApi:
    key = make_organization(deployment, "users org")
    return RawApi(deployment, key, key.organization_id)


def _jwt(claims: dict[str, str]) -> str:
    def part(data: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


def _user(name: str, **extra: object) -> dict[str, object]:
    return {"userName": name, "apiKeys": [], "authenticators": [], "oauthProviders": [],
            "userTags": [], **extra}


def _create_user(org: RawApi, name: str, **extra: object) -> str:
    result = org.ok("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4",
                    {"users": [_user(name, **extra)]})
    return result["userIds"][0]  # type: ignore[no-any-return]


def test_create_users_with_passkeys_and_oauth_providers(org: RawApi) -> None:
    passkey = SoftAuthenticator()
    token = _jwt({"iss": "https://issuer.example", "sub": "s-1", "aud": "client-1"})
    user_id = _create_user(org, "carol", userEmail="carol@example.com",
                           userPhoneNumber="+447700900123",
                           authenticators=[passkey.registration("carol's phone")],
                           oauthProviders=[
                               {"providerName": "google", "oidcToken": token},
                               {"providerName": "apple", "oidcClaims": {
                                   "iss": "https://appleid.example", "sub": "a-9", "aud": "x"}}])
    user = org.read("get_user", {"userId": user_id})["user"]
    assert user["userEmail"] == "carol@example.com"
    assert user["userPhoneNumber"] == "+447700900123"
    assert [a["credentialId"] for a in user["authenticators"]] == [passkey.credential_id_b64]
    providers = {p["providerName"]: p for p in user["oauthProviders"]}
    assert providers["google"]["issuer"] == "https://issuer.example"
    assert providers["google"]["subject"] == "s-1"
    assert providers["google"]["audience"] == "client-1"
    assert providers["apple"]["subject"] == "a-9"
    listed = org.read("get_oauth_providers", {"userId": user_id})["oauthProviders"]
    assert len(listed) == 2
    assert RawApi(org.dep, passkey, org.organization_id).read("whoami")["userId"] == user_id


@pytest.mark.parametrize(("field", "value"), [("userEmail", "not-an-email"),
                                              ("userPhoneNumber", "07700 900123")])
def test_create_users_validates_contacts(org: RawApi, field: str, value: str) -> None:
    response = org.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4",
                          {"users": [_user("dave", **{field: value})]})
    assert response.status_code == 400, response.text
    assert field in json.dumps(response.json())


def test_update_user_and_its_single_field_variants(org: RawApi) -> None:
    user_id = _create_user(org, "erin")
    tag = org.ok("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                 {"userTagName": "ops", "userIds": []})["userTagId"]
    org.ok("update_user", "ACTIVITY_TYPE_UPDATE_USER", {
        "userId": user_id, "userName": "erin2", "userEmail": "erin@example.com",
        "userPhoneNumber": "+14155550123", "userTagIds": [tag]})
    user = org.read("get_user", {"userId": user_id})["user"]
    assert (user["userName"], user["userEmail"], user["userPhoneNumber"], user["userTags"]) == (
        "erin2", "erin@example.com", "+14155550123", [tag])
    org.ok("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
           {"userId": user_id, "userEmail": "erin@new.example"})
    org.ok("update_user_phone_number", "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
           {"userId": user_id, "userPhoneNumber": ""})
    user = org.read("get_user", {"userId": user_id})["user"]
    assert user["userEmail"] == "erin@new.example"
    assert "userPhoneNumber" not in user
    bad = org.submit("update_user_phone_number", "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
                     {"userId": user_id, "userPhoneNumber": "+0123"})
    assert bad.status_code == 400
    missing = org.submit("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
                         {"userId": "00000000-0000-0000-0000-000000000000",
                          "userEmail": "x@example.com"})
    assert missing.status_code == 404


def test_delete_users_removes_them_and_their_credentials(org: RawApi) -> None:
    key = make_key()
    user_id = _create_user(org, "frank", apiKeys=[key.api_key_params()])
    frank = RawApi(org.dep, key, org.organization_id)
    assert frank.query("whoami").status_code == 200
    assert org.ok("delete_users", "ACTIVITY_TYPE_DELETE_USERS",
                  {"userIds": [user_id]}) == {"userIds": [user_id]}
    assert frank.query("whoami").status_code == 401
    assert org.query("get_user", {"userId": user_id}).status_code == 404


def test_deleting_the_only_root_user_is_refused(org: RawApi) -> None:
    response = org.submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS",
                          {"userIds": [org.stamper.user_id]})  # type: ignore[union-attr]
    assert response.status_code == 400
    assert "root quorum" in response.json()["message"]


@pytest.mark.parametrize("curve", CURVES)
def test_api_keys_on_every_curve_authenticate_and_expire(org: RawApi, curve: str) -> None:
    lasting, expiring = make_key(curve), make_key(curve)
    result = org.ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": org.stamper.user_id,  # type: ignore[union-attr]
        "apiKeys": [lasting.api_key_params("lasting"),
                    expiring.api_key_params("expiring", expiration_seconds="1")]})
    lasting_id, expiring_id = result["apiKeyIds"]
    shown = org.read("get_api_key", {"apiKeyId": expiring_id})["apiKey"]
    assert shown["expirationSeconds"] == "1"
    assert RawApi(org.dep, lasting, org.organization_id).query("whoami").status_code == 200
    time.sleep(1.5)  # let the 1-second key lapse (a wait, not a timing assertion)
    response = RawApi(org.dep, expiring, org.organization_id).query("whoami")
    assert response.status_code == 401
    assert response.json()["message"] == "expired api key"
    assert RawApi(org.dep, lasting, org.organization_id).query("whoami").status_code == 200
    keys = org.read("get_api_keys", {"userId": org.stamper.user_id})["apiKeys"]  # type: ignore[union-attr]
    assert {lasting_id, expiring_id} <= {k["apiKeyId"] for k in keys}


def test_eleventh_long_lived_api_key_is_a_429(org: RawApi) -> None:
    user_id = org.stamper.user_id  # type: ignore[union-attr]  # holds 1 key already
    org.ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": user_id, "apiKeys": [make_key().api_key_params(f"k{i}") for i in range(9)]})
    response = org.submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": user_id, "apiKeys": [make_key().api_key_params("one too many")]})
    assert response.status_code == 429, response.text
    assert response.json()["message"] == (
        "user has exceeded maximum number of long-lived API keys "
        "(limit long_lived_api_keys_per_user: 10)")


def test_eleventh_expiring_api_key_evicts_the_oldest(org: RawApi) -> None:
    user_id = org.stamper.user_id  # type: ignore[union-attr]
    first = org.ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": user_id, "apiKeys": [make_key().api_key_params("first", "3600")]})["apiKeyIds"][0]
    org.ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": user_id,
        "apiKeys": [make_key().api_key_params(f"e{i}", "3600") for i in range(9)]})
    eleventh = org.ok("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        "userId": user_id, "apiKeys": [make_key().api_key_params("eleventh", "3600")]})
    keys = {k["apiKeyId"] for k in org.read("get_api_keys", {"userId": user_id})["apiKeys"]}
    assert first not in keys
    assert eleventh["apiKeyIds"][0] in keys
    assert len(keys) == 11  # the long-lived root key plus 10 expiring ones


def test_oauth_providers_can_be_added_and_removed(org: RawApi) -> None:
    user_id = org.stamper.user_id  # type: ignore[union-attr]
    created = org.ok("create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2", {
        "userId": user_id, "oauthProviders": [{"providerName": "gh", "oidcClaims": {
            "iss": "https://token.example", "sub": "42", "aud": "me"}}]})
    (provider_id,) = created["providerIds"]
    duplicate = org.submit("create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2", {
        "userId": user_id, "oauthProviders": [{"providerName": "gh2", "oidcClaims": {
            "iss": "https://token.example", "sub": "42", "aud": "me"}}]})
    assert duplicate.status_code == 409
    org.ok("delete_oauth_providers", "ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS",
           {"userId": user_id, "providerIds": [provider_id]})
    assert org.read("get_oauth_providers", {"userId": user_id})["oauthProviders"] == []


def test_more_than_100_users_is_a_429_and_creates_nobody(org: RawApi) -> None:
    response = org.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4",
                          {"users": [_user(f"u{i}") for i in range(100)]})
    assert response.status_code == 429, response.text
    assert "users_per_organization: 100" in response.json()["message"]
    assert len(org.read("list_users")["users"]) == 1
