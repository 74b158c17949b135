"""Sign-up and login by one-time code through the auth proxy, as a browser does it with the
v1 OTP paths (PROTOCOL.md §0.1), and the abuse cases: forged and replayed tokens, a code
guessed from another origin. Needs the sessions activities (init_otp, verify_otp,
otp_login)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.auth_proxy.conftest import Proxied, Tenant, new_tenant
from tests.support.auth_proxy import client_signature, token_claims
from tests.support.deployment import Key
from tests.support.keys import TestKey as StampKey
from tests.support.keys import make_key
from tests.support.mailboxes import code_in, text_part
from tests.support.raw_api import RawApi

APP = "https://app.example.com"


def _code(proxied: Proxied, tenant: Tenant, email: str, origin: str = APP) -> tuple[str, str]:
    init = proxied.call("otp_init", {"otpType": "OTP_TYPE_EMAIL", "contact": email},
                        tenant.config_id, origin=origin)
    assert init.status_code == 200, init.text
    return init.json()["otpId"], code_in(text_part(proxied.mailbox.last_to(email)))


def _verify(proxied: Proxied, tenant: Tenant, email: str, client: StampKey,
            spelling: str = "publicKey") -> str:
    otp_id, code = _code(proxied, tenant, email)
    verified = proxied.call("otp_verify", {"otpId": otp_id, "otpCode": code,
                                           spelling: client.public_key}, tenant.config_id,
                            origin=APP)
    assert verified.status_code == 200, verified.text
    return str(verified.json()["verificationToken"])


def _signup(proxied: Proxied, tenant: Tenant, email: str, token: str, client: StampKey,
            session_key: StampKey) -> Any:
    api_keys = [session_key.api_key_params("session")]
    message = {"signupV2": {"apiKeys": api_keys, "email": email},
               "tokenId": token_claims(token)["id"], "type": "USAGE_TYPE_SIGNUP"}
    return proxied.call("signup_v2", {
        "userEmail": email, "verificationToken": token, "apiKeys": api_keys,
        "authenticators": [], "oauthProviders": [],
        "clientSignature": client_signature(client, message)}, tenant.config_id, origin=APP)


def _login(proxied: Proxied, tenant: Tenant, token: str, client: StampKey, session_key: StampKey,
           spelling: str = "clientSignature", path: str = "otp_login") -> Any:
    message = {"login": {"publicKey": session_key.public_key},
               "tokenId": token_claims(token)["id"], "type": "USAGE_TYPE_LOGIN"}
    return proxied.call(path, {"verificationToken": token, "publicKey": session_key.public_key,
                               spelling: client_signature(client, message)},
                        tenant.config_id, origin=APP)


@pytest.fixture
def app_tenant(proxied: Proxied) -> Tenant:
    return new_tenant(proxied.dep, allowedOrigins=[APP])


@pytest.mark.parametrize(("verify_spelling", "login_spelling"),
                         [("publicKey", "clientSignature"), ("public_key", "client_signature")])
def test_sign_up_then_log_in_by_email_code(proxied: Proxied, app_tenant: Tenant,
                                           verify_spelling: str, login_spelling: str) -> None:
    email = f"otp-{verify_spelling}@example.com"
    client, session_key = make_key(), make_key()
    token = _verify(proxied, app_tenant, email, client, verify_spelling)
    assert token_claims(token)["public_key"] == client.public_key
    signed_up = _signup(proxied, app_tenant, email, token, client, session_key)
    assert signed_up.status_code == 200, signed_up.text
    sub_id, user_id = signed_up.json()["organizationId"], signed_up.json()["userId"]
    found = proxied.call("account", {"filterType": "EMAIL", "filterValue": email},
                         app_tenant.config_id)
    assert found.json() == {"organizationId": sub_id}
    login_key = make_key()
    login = _login(proxied, app_tenant, token, client, login_key, login_spelling)
    assert login.status_code == 200, login.text
    claims = token_claims(login.json()["session"])
    assert claims["organization_id"] == sub_id and claims["user_id"] == user_id
    assert claims["public_key"] == login_key.public_key
    # The session key stamps for the user, and creates a wallet.
    session = RawApi(proxied.dep, Key(sub_id, user_id, login_key.public_key,
                                      login_key.private_key), sub_id)
    assert session.read("whoami")["userId"] == user_id
    wallet = session.ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
        "walletName": "mine", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
    assert wallet["addresses"][0].startswith("0x")
    # The same token logs in once only.
    again = _login(proxied, app_tenant, token, client, make_key(), login_spelling)
    assert again.status_code in (400, 401, 403) and "used" in again.json()["message"]


def test_sms_codes_go_through_the_sms_provider(proxied: Proxied, app_tenant: Tenant) -> None:
    app_tenant.update(allowedAuthMethods=["sms"], smsCustomizationParams={
        "template": "Your Example code: {{.OtpCode}}"})
    phone = "+15557654321"
    init = proxied.call("otp_init_v2", {"otpType": "OTP_TYPE_SMS", "contact": phone},
                        app_tenant.config_id, origin=APP)
    assert init.status_code == 200, init.text
    assert set(init.json()) == {"otpId", "otpEncryptionTargetBundle"}
    text = proxied.sms.last_to(phone)["Body"]
    assert text.startswith("Your Example code: ")
    code = text.rsplit(" ", 1)[1]
    client = make_key()
    verified = proxied.call("otp_verify", {"otpId": init.json()["otpId"], "otpCode": code,
                                           "publicKey": client.public_key},
                            app_tenant.config_id, origin=APP)
    assert verified.status_code == 200, verified.text
    assert token_claims(verified.json()["verificationToken"])["contact"] == phone


def test_a_forged_token_does_not_sign_up(proxied: Proxied, app_tenant: Tenant) -> None:
    email = "forger@example.com"
    client, session_key = make_key(), make_key()
    token = _verify(proxied, app_tenant, email, client)
    header, _payload, signature = token.split(".")
    # Same claims for another address, the original signature: does not verify.
    import base64
    import json

    claims = token_claims(token)
    claims["contact"] = "victim@example.com"
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    forged = f"{header}.{forged_payload}.{signature}"
    response = _signup(proxied, app_tenant, "victim@example.com", forged, client, session_key)
    assert response.status_code == 401 and "does not verify" in response.json()["message"]
    # A real token for one address does not sign up another.
    response = _signup(proxied, app_tenant, "victim@example.com", token, client, session_key)
    assert response.status_code == 401 and "another contact" in response.json()["message"]
    # A real token with a client signature by a key it is not bound to.
    response = _signup(proxied, app_tenant, email, token, make_key(), session_key)
    assert response.status_code == 401


def test_a_code_guessed_from_another_origin_is_refused(proxied: Proxied,
                                                       app_tenant: Tenant) -> None:
    otp_id, code = _code(proxied, app_tenant, "guess@example.com")
    response = proxied.call("otp_verify", {"otpId": otp_id, "otpCode": code,
                                           "publicKey": make_key().public_key},
                            app_tenant.config_id, origin="https://evil.example")
    assert response.status_code == 403
    assert "Access-Control-Allow-Origin" not in response.headers
    # The code is still good for the page on the allowed origin.
    ok = proxied.call("otp_verify", {"otpId": otp_id, "otpCode": code,
                                     "publicKey": make_key().public_key},
                      app_tenant.config_id, origin=APP)
    assert ok.status_code == 200, ok.text


def test_wrong_codes_kill_the_code(proxied: Proxied, app_tenant: Tenant) -> None:
    otp_id, code = _code(proxied, app_tenant, "brute@example.com")
    wrong = "000000000" if code != "000000000" else "111111111"
    for _ in range(3):
        response = proxied.call("otp_verify", {"otpId": otp_id, "otpCode": wrong,
                                               "publicKey": make_key().public_key},
                                app_tenant.config_id)
        assert response.status_code != 200
    response = proxied.call("otp_verify", {"otpId": otp_id, "otpCode": code,
                                           "publicKey": make_key().public_key},
                            app_tenant.config_id)
    assert response.status_code != 200


def test_a_replayed_token_does_not_sign_up_twice(proxied: Proxied, app_tenant: Tenant) -> None:
    email = "replay@example.com"
    client = make_key()
    token = _verify(proxied, app_tenant, email, client)
    first = _signup(proxied, app_tenant, email, token, client, make_key())
    assert first.status_code == 200, first.text
    # The token does not rest in the stored intent (sealed, then redacted once settled).
    stored = [a["intent"] for a in app_tenant.api.read("list_activities")["activities"]
              if a["type"] == "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7"]
    assert stored and token not in json.dumps(stored)
    replayed = _signup(proxied, app_tenant, email, token, client, make_key())
    assert replayed.status_code == 401, replayed.text
    assert "already used" in replayed.json()["message"]
    # Straight at the API, past the proxy, the token is just as spent.
    direct = app_tenant.api.submit("create_sub_organization",
                                   "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        "subOrganizationName": "replay", "rootUsers": [{
            "userName": "x", "userEmail": email, "apiKeys": [], "authenticators": [],
            "oauthProviders": []}], "rootQuorumThreshold": 1, "verificationToken": token})
    assert direct.status_code == 401, direct.text


def test_account_lookups_by_contact_can_require_a_token_for_it(proxied: Proxied,
                                                               app_tenant: Tenant) -> None:
    app_tenant.update(verificationTokenRequiredForGetAccountPii=True)
    email = "pii@example.com"
    lookup = {"filterType": "EMAIL", "filterValue": email}
    refused = proxied.call("account", lookup, app_tenant.config_id)
    assert refused.status_code == 403 and "verificationToken" in refused.json()["message"]
    token = _verify(proxied, app_tenant, email, make_key())
    assert proxied.call("account", {**lookup, "verificationToken": token},
                        app_tenant.config_id).json() == {}
    other = proxied.call("account", {"filterType": "EMAIL", "filterValue": "else@example.com",
                                     "verificationToken": token}, app_tenant.config_id)
    assert other.status_code == 403 and "another contact" in other.json()["message"]
