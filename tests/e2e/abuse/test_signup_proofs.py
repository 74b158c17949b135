"""Sign-ups that prove something (issue 31): the attacker's side of ``/v1/signup(_v2)``.

Mallory holds what every visitor of the app holds: the auth proxy's configuration id (it is
in the page) and an HTTP client. She tries to mint sub-organizations whose user nobody can
reach (no credential, no proven contact), or to slip a body the swagger does not allow past
the proxy. What must stop her: the proxy validates the body against the auth proxy schema
(``authproxy.signup_request.parse_signup``) and refuses a user without a way in
(``require_a_way_in``) before anything is forwarded: a 400 in the wire body naming the rule,
no sub-organization and no activity upstream. The honest sign-ups (email code, API key,
passkey, OAuth) keep working beside each attempt.
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.sessions.oidc import nonce_for
from tests.e2e.abuse.conftest import CLIENT_ID, World, email_token, signed_up, signup
from tests.e2e.auth_proxy.conftest import Tenant
from tests.support.keys import make_key
from tests.support.soft_authenticator import SoftAuthenticator

EMPTY_LISTS: dict[str, Any] = {"apiKeys": [], "authenticators": [], "oauthProviders": []}


def _footprint(tenant: Tenant) -> tuple[int, int]:
    """(sub-organizations, activities) of the tenant: what a refused sign-up must not move."""
    suborgs = tenant.api.read("list_suborgs", {}).get("organizationIds") or []
    activities = tenant.api.read("list_activities", {}).get("activities") or []
    return len(suborgs), len(activities)


def _refused(world: World, tenant: Tenant, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` is refused with a 400 wire error and leaves the tenant as it was."""
    before = _footprint(tenant)
    response = world.call(tenant, path, body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert set(error) >= {"code", "message", "details"}, error
    assert _footprint(tenant) == before
    return error


@pytest.mark.parametrize("path", ["signup", "signup_v2"])
def test_an_empty_body_mints_no_tenant(world: World, tenant: Tenant, path: str) -> None:
    error = _refused(world, tenant, path, {})
    assert "auth proxy schema" in error["message"] and "apiKeys" in error["message"]
    violations = error["details"][0]["fieldViolations"]
    assert {v["field"] for v in violations} == {"apiKeys", "authenticators", "oauthProviders"}


@pytest.mark.parametrize("path", ["signup", "signup_v2"])
def test_empty_lists_and_a_name_mint_no_tenant(world: World, tenant: Tenant, path: str) -> None:
    error = _refused(world, tenant, path, {**EMPTY_LISTS, "userName": "nobody",
                                           "organizationName": "ghost town"})
    assert "a sign-up must give its user a way in" in error["message"]


def test_a_user_tag_array_is_not_a_string(world: World, tenant: Tenant) -> None:
    key = make_key()
    error = _refused(world, tenant, "signup_v2", {**EMPTY_LISTS, "apiKeys": [
        key.api_key_params("k")], "userTag": ["admin", "root"]})
    assert "v1SignupV2Request" in error["message"] and "userTag" in error["message"]
    # The same body with the tag as the schema types it signs up.
    signed_up(world.call(tenant, "signup_v2", {**EMPTY_LISTS, "apiKeys": [
        key.api_key_params("k")], "userTag": "admin"}))


def test_wrong_types_inside_the_lists_are_named(world: World, tenant: Tenant) -> None:
    error = _refused(world, tenant, "signup_v2", {**EMPTY_LISTS, "apiKeys": [
        {"apiKeyName": "k", "publicKey": make_key().public_key, "curveType": "API_KEY_CURVE_RSA"}]})
    assert "apiKeys.0.curveType" in error["message"]
    error = _refused(world, tenant, "signup_v2", {**EMPTY_LISTS, "apiKeys": "02ab"})
    assert "apiKeys" in error["message"]


def test_an_unverified_email_alone_mints_no_tenant(world: World, tenant: Tenant) -> None:
    error = _refused(world, tenant, "signup_v2", {**EMPTY_LISTS, "userEmail": "alice@example.com"})
    assert "a sign-up must give its user a way in" in error["message"]
    # With a key she holds, the email is still someone else's until a code proves it.
    error = _refused(world, tenant, "signup_v2", {**EMPTY_LISTS, "userEmail": "alice@example.com",
                                                  "apiKeys": [make_key().api_key_params("k")]})
    assert "verificationToken" in error["message"]


def test_a_token_without_its_contact_mints_no_tenant(world: World, tenant: Tenant) -> None:
    client = make_key()
    token = email_token(world, tenant, "token-only@example.com", client)
    error = _refused(world, tenant, "signup_v2", {**EMPTY_LISTS, "verificationToken": token})
    assert "userEmail or userPhoneNumber" in error["message"]


@pytest.mark.parametrize("path", ["signup", "signup_v2"])
def test_bare_oidc_claims_mint_no_tenant(world: World, tenant: Tenant, path: str) -> None:
    """Claims of someone's Google identity, with no token, prove nothing and hold nothing."""
    error = _refused(world, tenant, path, {**EMPTY_LISTS, "oauthProviders": [{
        "providerName": "google", "oidcClaims": {"iss": world.provider.issuer, "sub": "alice",
                                                 "aud": CLIENT_ID}}]})
    assert ("a sign-up must give its user a way in" in error["message"]
            if path == "signup_v2" else "oauthProviders.0.oidcToken" in error["message"])


# --- the honest sign-ups keep working -------------------------------------------------------


def test_an_email_with_its_verification_token_signs_up(world: World, tenant: Tenant) -> None:
    client = make_key()
    email = "proven@example.com"
    before = _footprint(tenant)[0]
    org, _ = signed_up(signup(world, tenant, token=email_token(world, tenant, email, client),
                              client=client, email=email))
    assert _footprint(tenant)[0] == before + 1
    assert org in tenant.api.read("list_suborgs", {})["organizationIds"]


def test_an_api_key_signs_up_and_nulls_are_absent_fields(world: World, tenant: Tenant) -> None:
    # The Rust client sends null for unset optionals (proto3 JSON: null is "absent").
    org, user = signed_up(world.call(tenant, "signup", {
        **EMPTY_LISTS, "apiKeys": [make_key().api_key_params("wallet")], "userEmail": None,
        "wallet": None, "someFutureField": {"x": 1}}))
    keys = tenant.api.read("get_api_keys", {"userId": user}, organization_id=org)["apiKeys"]
    assert [k["apiKeyName"] for k in keys] == ["wallet"]


def test_a_passkey_signs_up(world: World, tenant: Tenant) -> None:
    passkey = SoftAuthenticator()
    org, user = signed_up(world.call(tenant, "signup_v2", {
        **EMPTY_LISTS, "userName": "passkey user", "authenticators": [passkey.registration("laptop")]}))
    found = tenant.api.read("get_authenticators", {"userId": user}, organization_id=org)
    assert [a["authenticatorName"] for a in found["authenticators"]] == ["laptop"]


def test_an_oauth_provider_with_its_token_signs_up(world: World, tenant: Tenant) -> None:
    token = world.provider.id_token(sub="honest-sub", aud=CLIENT_ID,
                                    nonce=nonce_for(make_key().public_key))
    org, _ = signed_up(world.call(tenant, "signup_v2", {**EMPTY_LISTS, "oauthProviders": [
        {"providerName": "google", "oidcToken": token}]}))
    assert org in tenant.api.read("list_suborgs", {})["organizationIds"]
