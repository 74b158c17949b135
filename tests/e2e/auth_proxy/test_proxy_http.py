"""The auth proxy over HTTP: its paths and field names, the configuration header, CORS,
forwarded answers and errors, rate limits."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from infra.db.engine import make_engine, make_session_factory
from tests.e2e.auth_proxy.conftest import Proxied, Tenant, new_tenant, start
from tests.support import interop
from tests.support.deployment import database_url
from tests.support.keys import make_key

WIRE = {"code", "message", "details"}
APP = "https://app.example.com"


def _wire_error(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) >= WIRE
    return body


def _eventually(check: Any, timeout: float = 20.0) -> Any:
    """Poll ``check`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.3)


def test_wallet_kit_config_answers_from_the_configuration_with_an_empty_body(
        proxied: Proxied, tenant: Tenant) -> None:
    tenant.update(allowedAuthMethods=["email", "passkey"], sessionExpirationSeconds=1200,
                  otpLength=7, otpAlphanumeric=False,
                  walletKitSettings={"enabledSocialProviders": ["google"],
                                     "oauthClientIds": {"google": "gid-1"},
                                     "oauthRedirectUrl": "https://app.example.com/cb"})
    response = proxied.call("wallet_kit_config", b"", tenant.config_id)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "enabledProviders": ["email", "passkey", "google"], "sessionExpirationSeconds": "1200",
        "organizationId": tenant.api.organization_id, "otpLength": "7", "otpAlphanumeric": False,
        "oauthClientIds": {"google": "gid-1"}, "oauthRedirectUrl": "https://app.example.com/cb"}
    params = proxied.call("wallet_kit_client_params", b"", tenant.config_id)
    assert params.status_code == 200 and params.json() == {}


def test_the_official_core_helpers_post_no_body_and_are_answered(proxied: Proxied, tenant: Tenant) -> None:
    """@turnkey/core's ``getAuthProxyConfig`` and ``getClientParams`` (what react-wallet-kit
    calls at start) POST these two paths with no body at all: the swagger marks a body
    required, the official client never sends one, so a missing body is accepted here (and
    anything else still has to be a JSON object)."""
    node = interop.node_with("@turnkey/core")
    seen = interop.run_script(node, "auth_proxy_wallet_kit.mjs",
                              {"url": proxied.proxy_url, "configId": tenant.config_id})
    assert "error" not in seen, seen
    assert seen["config"]["organizationId"] == tenant.api.organization_id
    assert seen["clientParams"] == {}
    for path in ("wallet_kit_config", "wallet_kit_client_params"):
        refused = _wire_error(proxied.call(path, b"[]", tenant.config_id), 400)
        assert "JSON object" in refused["message"]


def test_the_config_header_is_required_known_and_enabled(proxied: Proxied, tenant: Tenant) -> None:
    missing = _wire_error(proxied.call("wallet_kit_config", {}, None), 400)
    assert "X-Auth-Proxy-Config-Id" in missing["message"]
    unknown = _wire_error(proxied.call("wallet_kit_config", {},
                                       "00000000-0000-4000-8000-000000000000"), 404)
    assert "unknown auth proxy configuration" in unknown["message"]
    tenant.api.ok("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {})
    refused = _eventually(lambda: proxied.call("wallet_kit_config", {}, tenant.config_id)
                          .status_code == 403)
    assert refused
    assert "disabled" in _wire_error(proxied.call("wallet_kit_config", {}, tenant.config_id),
                                     403)["message"]


def test_preflight_is_answered_and_origins_are_enforced_on_the_real_request(
        proxied: Proxied) -> None:
    tenant = new_tenant(proxied.dep, allowedOrigins=[APP])
    preflight = requests.options(f"{proxied.proxy_url}/v1/signup", timeout=10, headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-auth-proxy-config-id"})
    assert preflight.status_code == 204
    assert "x-auth-proxy-config-id" in preflight.headers["Access-Control-Allow-Headers"].lower()
    allowed = proxied.call("wallet_kit_config", {}, tenant.config_id, origin=APP)
    assert allowed.status_code == 200
    assert allowed.headers["Access-Control-Allow-Origin"] == APP
    refused = proxied.call("wallet_kit_config", {}, tenant.config_id, origin="https://evil.example")
    assert "https://evil.example" in _wire_error(refused, 403)["message"]
    assert "Access-Control-Allow-Origin" not in refused.headers


def test_an_origin_change_takes_effect_on_the_proxy(proxied: Proxied, tenant: Tenant) -> None:
    other = "https://other.example.com"
    assert proxied.call("wallet_kit_config", {}, tenant.config_id, origin=other).status_code == 200
    tenant.update(allowedOrigins=[APP])
    assert _eventually(lambda: proxied.call("wallet_kit_config", {}, tenant.config_id,
                                            origin=other).status_code == 403)
    assert proxied.call("wallet_kit_config", {}, tenant.config_id, origin=APP).status_code == 200


def _signup_body(email: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"userEmail": email, "userName": "Ada", "organizationName": "Ada's org",
            "apiKeys": [make_key().api_key_params("session")], "authenticators": [],
            "oauthProviders": [], **extra}


@pytest.mark.parametrize("path", ["signup", "signup_v2"])
def test_signup_creates_a_sub_organization_with_a_wallet(proxied: Proxied, tenant: Tenant,
                                                         path: str) -> None:
    key = make_key()
    response = proxied.call(path, _signup_body(apiKeys=[key.api_key_params("k")], wallet={
        "walletName": "Default", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]}),
        tenant.config_id, origin=APP)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) >= {"organizationId", "userId", "wallet"}
    assert body["wallet"]["addresses"][0].startswith("0x")
    sub = tenant.api.read("get_user", {"userId": body["userId"]},
                          organization_id=body["organizationId"])["user"]
    assert sub["userName"] == "Ada"
    found = proxied.call("account", {"filterType": "PUBLIC_KEY", "filterValue": key.public_key},
                         tenant.config_id)
    assert found.status_code == 200 and found.json() == {"organizationId": body["organizationId"]}
    nobody = proxied.call("account", {"filterType": "EMAIL", "filterValue": "no@example.com"},
                          tenant.config_id)
    assert nobody.status_code == 200 and nobody.json() == {}


def test_errors_of_the_forwarded_activity_come_back_with_their_payload(
        proxied: Proxied, tenant: Tenant) -> None:
    bad = _signup_body(apiKeys=[{"apiKeyName": "k", "publicKey": "zz",
                                 "curveType": "API_KEY_CURVE_P256"}])
    proxy_answer = proxied.call("signup_v2", bad, tenant.config_id)
    body = _wire_error(proxy_answer, 400)
    assert "publicKey" in body["message"] and body["details"]


@pytest.mark.parametrize("contact", [{"userEmail": "squat@example.com"},
                                     {"userPhoneNumber": "+15551230000"}])
def test_signup_with_a_contact_needs_a_verification_token(
        proxied: Proxied, tenant: Tenant, contact: dict[str, str]) -> None:
    response = proxied.call("signup_v2", {**_signup_body(), **contact}, tenant.config_id)
    assert "verificationToken" in _wire_error(response, 400)["message"]


@pytest.mark.parametrize("path", ["signup", "signup_v2"])
def test_signup_with_a_verification_token_needs_a_client_signature(
        proxied: Proxied, tenant: Tenant, path: str) -> None:
    response = proxied.call(path, _signup_body("t@example.com", verificationToken="a.b.c"),
                            tenant.config_id)
    assert "clientSignature is required" in _wire_error(response, 400)["message"]


@pytest.mark.parametrize("path", ["otp_login", "otp_login_v2"])
def test_otp_login_needs_a_client_signature(proxied: Proxied, tenant: Tenant, path: str) -> None:
    response = proxied.call(path, {"verificationToken": "a.b.c",
                                   "publicKey": make_key().public_key}, tenant.config_id)
    assert "clientSignature is required" in _wire_error(response, 400)["message"]


@pytest.mark.parametrize("spelling", ["clientSignature", "client_signature"])
def test_otp_login_takes_both_spellings_of_the_client_signature(
        proxied: Proxied, tenant: Tenant, spelling: str) -> None:
    signature = {"publicKey": make_key().public_key, "scheme": "CLIENT_SIGNATURE_SCHEME_API_P256",
                 "message": "{}", "signature": "00" * 64}
    response = proxied.call("otp_login", {"verificationToken": "a.b.c",
                                          "publicKey": make_key().public_key,
                                          spelling: signature}, tenant.config_id)
    # Past the proxy's own check: the API judged the (forged) token.
    body = _wire_error(response, response.status_code)
    assert response.status_code in (400, 401, 403, 404) and "clientSignature is required" not in (
        body["message"])


def test_methods_not_allowed_by_the_configuration_are_refused(proxied: Proxied) -> None:
    tenant = new_tenant(proxied.dep, allowedAuthMethods=["passkey"])
    response = proxied.call("otp_init", {"otpType": "OTP_TYPE_EMAIL", "contact": "a@example.com"},
                            tenant.config_id)
    assert "email" in _wire_error(response, 403)["message"]
    response = proxied.call("oauth_login", {"oidcToken": "x", "publicKey": "02" + "00" * 32},
                            tenant.config_id)
    assert _wire_error(response, 403)


def test_otp_initiations_are_limited_per_contact(proxied: Proxied, tenant: Tenant) -> None:
    body = {"otpType": "OTP_TYPE_EMAIL", "contact": "Flood@Example.com"}
    answers = [proxied.call("otp_init", body, tenant.config_id).status_code for _ in range(4)]
    assert 429 not in answers[:3] and answers[3] == 429
    other = proxied.call("otp_init", {**body, "contact": "calm@example.com"}, tenant.config_id)
    assert other.status_code != 429


def test_malformed_bodies_are_wire_errors(proxied: Proxied, tenant: Tenant) -> None:
    assert _wire_error(proxied.call("signup", b"{not json", tenant.config_id), 400)
    assert _wire_error(proxied.call("signup", b"[1]", tenant.config_id), 400)
    assert _wire_error(proxied.call("account", {"filterType": "SHOE_SIZE", "filterValue": "9"},
                                    tenant.config_id), 400)
    assert _wire_error(proxied.call("no_such_path", {}, tenant.config_id), 404)


def test_the_proxy_client_ids_are_accepted_oidc_audiences(proxied: Proxied, tenant: Tenant) -> None:
    from infra.sessions.oidc import accepted_audiences

    tenant.update(walletKitSettings={"oauthClientIds": {"google": "proxy-google-client"}})
    engine = make_engine(database_url(proxied.dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            assert "proxy-google-client" in accepted_audiences(
                session, [tenant.api.organization_id])
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    with start(tmp_path_factory.mktemp("strict"), WALLETD_AUTH_PROXY_RATE_ADDRESS="5") as running:
        yield running


def test_a_flood_from_one_address_gets_429_with_a_wire_body(strict: Proxied) -> None:
    tenant = new_tenant(strict.dep)
    answers = [strict.call("wallet_kit_config", {}, tenant.config_id) for _ in range(8)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    limited = answers[-1]
    assert "too many requests" in _wire_error(limited, 429)["message"]
    assert int(limited.headers["Retry-After"]) >= 1
