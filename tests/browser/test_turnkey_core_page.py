"""A page bundling the official ``@turnkey/core`` (esbuild, at test time) signs users up and
logs them in through the auth proxy in headless Chromium: email and SMS one-time codes, OAuth
with a loopback OIDC provider; it creates a wallet and signs with the session. The same page
on an origin the configuration does not allow is refused."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from eth_utils import keccak

from tests.browser.conftest import shot
from tests.e2e.auth_proxy.conftest import Proxied, Tenant, new_tenant
from tests.support.auth_proxy import token_claims
from tests.support.keys import make_key
from tests.support.mailboxes import code_in, text_part
from tests.support.mfa import attested_approve, verification_token
from tests.support.oidc_provider import OidcProvider

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``page/`` with ``bundle.js``: ``@turnkey/core`` from npm, bundled by esbuild."""
    esbuild = HERE / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        pytest.fail("run `make install-test` (npm install in tests/browser)")
    out = tmp_path_factory.mktemp("page")
    shutil.copy(HERE / "page" / "index.html", out / "index.html")
    subprocess.run([str(esbuild), str(HERE / "page" / "main.js"), "--bundle", "--format=esm",
                    "--platform=browser", f"--outfile={out / 'bundle.js'}", "--log-level=error"],
                   check=True, cwd=HERE, timeout=300)
    return out


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(bundle: Path) -> Iterator[int]:
    """The page on a loopback port: ``http://127.0.0.1:<port>`` is the allowed origin,
    ``http://localhost:<port>`` (same files) another one."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(bundle)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


@pytest.fixture
def shop(proxied: Proxied, site: int) -> Tenant:
    return new_tenant(proxied.dep, allowedOrigins=[f"http://127.0.0.1:{site}"])


def _open(browser: Any, proxied: Proxied, tenant: Tenant, origin: str) -> Any:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{origin}/index.html")
    page.wait_for_selector("#state:has-text('ready')")
    return page


def _init(page: Any, proxied: Proxied, tenant: Tenant) -> Any:
    return page.evaluate("(c) => window.walletdTest.init(c)", {
        "apiBaseUrl": proxied.dep.base_url, "authProxyUrl": proxied.proxy_url,
        "authProxyConfigId": tenant.config_id, "organizationId": tenant.api.organization_id})


def _check_signature(signed: dict[str, Any], message: str) -> None:
    digest = keccak(text=message)
    v = int(signed["v"], 16)
    recovered = Account._recover_hash(digest, vrs=(v + 27 if v < 27 else v, int(signed["r"], 16),
                                                   int(signed["s"], 16)))
    assert recovered.lower() == signed["address"].lower()


def _otp(page: Any, proxied: Proxied, kind: str, contact: str) -> dict[str, Any]:
    otp_id = page.evaluate("([t, c]) => window.walletdTest.initOtp(t, c)", [kind, contact])
    if kind == "OTP_TYPE_EMAIL":
        code = code_in(text_part(proxied.mailbox.last_to(contact)))
    else:
        code = proxied.sms.last_to(contact)["Body"].split()[-1]
    return page.evaluate("([t, c, i, k]) => window.walletdTest.verifyAndSignUp(t, c, i, k)",
                         [kind, contact, otp_id, code])


def test_email_sign_up_login_wallet_and_signature(browser: Any, proxied: Proxied, shop: Tenant,
                                                  site: int) -> None:
    origin = f"http://127.0.0.1:{site}"
    page = _open(browser, proxied, shop, origin)
    kit = _init(page, proxied, shop)
    assert kit["organizationId"] == shop.api.organization_id
    email = "browser.user@example.com"
    first = _otp(page, proxied, "OTP_TYPE_EMAIL", email)
    assert first["signedUp"] is True
    claims = token_claims(first["sessionToken"])
    assert claims["organization_id"] != shop.api.organization_id  # the user's sub-organization
    signed = page.evaluate("(m) => window.walletdTest.createWalletAndSign(m)", "hello walletd")
    assert signed["organizationId"] == claims["organization_id"]
    _check_signature(signed, "hello walletd")
    shot(page, "core-page-signed")
    page.context.close()
    # The same person comes back: the account is found and the code logs them in.
    again = _open(browser, proxied, shop, origin)
    _init(again, proxied, shop)
    second = _otp(again, proxied, "OTP_TYPE_EMAIL", email)
    assert second["signedUp"] is False
    assert token_claims(second["sessionToken"])["user_id"] == claims["user_id"]
    again.context.close()


def test_sms_sign_up(browser: Any, proxied: Proxied, shop: Tenant, site: int) -> None:
    page = _open(browser, proxied, shop, f"http://127.0.0.1:{site}")
    _init(page, proxied, shop)
    result = _otp(page, proxied, "OTP_TYPE_SMS", "+15550001111")
    assert result["signedUp"] is True
    signed = page.evaluate("(m) => window.walletdTest.createWalletAndSign(m)", "sms user")
    _check_signature(signed, "sms user")
    page.context.close()


def test_the_page_on_another_origin_is_refused(browser: Any, proxied: Proxied, shop: Tenant,
                                               site: int) -> None:
    page = _open(browser, proxied, shop, f"http://localhost:{site}")
    with pytest.raises(Exception, match=r"(?i)fetch|network|cors|failed"):
        _init(page, proxied, shop)
    seen = page.evaluate("(id) => window.walletdTest.proxyRaw('/v1/wallet_kit_config', id)",
                         shop.config_id)
    assert seen["readable"] is False
    direct = proxied.call("wallet_kit_config", {}, shop.config_id, origin=f"http://localhost:{site}")
    assert direct.status_code == 403
    shot(page, "core-page-refused")
    page.context.close()


def test_oauth_sign_up_and_login(browser: Any, proxied: Proxied, shop: Tenant, site: int,
                                 oidc: OidcProvider) -> None:
    client_id = "browser-google-client"
    shop.update(allowedAuthMethods=["email", "google"],
                walletKitSettings={"oauthClientIds": {"google": client_id}})
    page = _open(browser, proxied, shop, f"http://127.0.0.1:{site}")
    _init(page, proxied, shop)
    public_key = page.evaluate("() => window.walletdTest.newKey()")
    nonce = hashlib.sha256(public_key.encode()).hexdigest()
    token = oidc.id_token(sub="browser-sub-1", aud=client_id, nonce=nonce,
                          email="oauth.user@example.com")
    signup = proxied.call("signup_v2", {
        "userName": "OAuth user", "apiKeys": [], "authenticators": [],
        "oauthProviders": [{"providerName": "google", "oidcToken": token}]},
        shop.config_id, origin=f"http://127.0.0.1:{site}")
    assert signup.status_code == 200, signup.text
    session = page.evaluate("([t, k]) => window.walletdTest.loginWithOidc(t, k)", [token, public_key])
    assert token_claims(session)["organization_id"] == signup.json()["organizationId"]
    signed = page.evaluate("(m) => window.walletdTest.createWalletAndSign(m)", "oauth user")
    _check_signature(signed, "oauth user")
    page.context.close()


def test_oauth2_code_exchange_through_the_proxy(proxied: Proxied, shop: Tenant,
                                                oidc: OidcProvider) -> None:
    """``/v1/oauth2_authenticate``: the proxy finds the organization's X credential and the
    API exchanges the user's code (PKCE); the token it gets signs up and logs in."""
    import requests

    from infra.crypto import hpke, quorum
    from infra.sessions.oidc import nonce_for
    from tests.browser.conftest import X_CLIENT, X_SECRET
    from tests.e2e.auth_proxy.conftest import completed
    from tests.support.keys import make_key
    from tests.support.oidc_provider import pkce_pair

    shop.update(allowedAuthMethods=["x"])
    keys = requests.get(f"{proxied.dep.base_url}/public/v1/discovery/keys", timeout=10).json()
    envelope = quorum.encrypt(hpke.load_public_key(keys["encryptionPublicKey"]), X_SECRET.encode())
    completed(shop.api, "create_oauth2_credential", "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",
              {"provider": "OAUTH2_PROVIDER_X", "clientId": X_CLIENT,
               "encryptedClientSecret": envelope})
    session_key = make_key()
    verifier, challenge = pkce_pair()
    redirect = "https://shop.example/callback"
    code = oidc.authorize(client_id=X_CLIENT, redirect_uri=redirect, code_challenge=challenge,
                          user_id="777")
    body = {"provider": "OAUTH2_PROVIDER_X", "authCode": code, "redirectUri": redirect,
            "codeVerifier": verifier, "nonce": nonce_for(session_key.public_key),
            "clientId": X_CLIENT}
    answer = proxied.call("oauth2_authenticate", body, shop.config_id)
    assert answer.status_code == 200, answer.text
    token = answer.json()["oidcToken"]
    assert token_claims(token)["nonce"] == nonce_for(session_key.public_key)
    signup = proxied.call("signup_v2", {"userName": "X user", "apiKeys": [], "authenticators": [],
                                        "oauthProviders": [{"providerName": "x", "oidcToken": token}]},
                          shop.config_id)
    assert signup.status_code == 200, signup.text
    login = proxied.call("oauth_login", {"oidcToken": token, "publicKey": session_key.public_key},
                         shop.config_id)
    assert login.status_code == 200, login.text
    assert token_claims(login.json()["session"])["organization_id"] == signup.json()["organizationId"]
    # The same code again: the provider refuses, and the API's answer comes back.
    replay = proxied.call("oauth2_authenticate", body, shop.config_id)
    assert replay.status_code == 401, replay.text
    # A client id the organization did not register.
    other = proxied.call("oauth2_authenticate", {**body, "clientId": "unknown"}, shop.config_id)
    assert other.status_code == 404
    # The session key the token is bound to is the only one it logs in.
    wrong = proxied.call("oauth_login", {"oidcToken": token, "publicKey": make_key().public_key},
                         shop.config_id)
    assert wrong.status_code in (400, 401), wrong.text


SIGNING = "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'"


def test_core_on_mfa_required_completes_a_signature_after_email_and_passkey_steps(
        browser: Any, proxied: Proxied, site: int) -> None:
    """``@turnkey/core``'s ``onMfaRequired`` in Chromium: a user signed up by email adds a
    passkey (Chromium's virtual authenticator, ``addPasskey``) and an MFA policy (email code,
    then passkey) for signatures; the signature waits; the email step is an ``X-Stamp-Attested``
    approval with a fresh verification token, the passkey step core's own passkey-stamped
    ``approveActivity``; core's polling then returns the signature."""
    origin = f"http://localhost:{site}"  # a WebAuthn RP ID must be a name, not an address
    tenant = new_tenant(proxied.dep, allowedOrigins=[origin])
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{origin}/index.html")
    page.wait_for_selector("#state:has-text('ready')")
    devtools = context.new_cdp_session(page)
    devtools.send("WebAuthn.enable")
    devtools.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True}})
    page.evaluate("(c) => window.walletdTest.init(c)", {
        "apiBaseUrl": proxied.dep.base_url, "authProxyUrl": proxied.proxy_url,
        "authProxyConfigId": tenant.config_id, "organizationId": tenant.api.organization_id,
        "rpId": "localhost", "mfa": True})
    email = "mfa.browser@example.com"
    signed_up = _otp(page, proxied, "OTP_TYPE_EMAIL", email)
    sub_org = str(token_claims(signed_up["sessionToken"])["organization_id"])
    assert page.evaluate("() => window.walletdTest.addPasskey()")
    policy_id = page.evaluate("(p) => window.walletdTest.createMfaPolicy(p)", {
        "mfaPolicyName": "browser mfa", "condition": SIGNING, "order": 0,
        "requiredAuthenticationMethods": [{"any": [{"type": "AUTHENTICATION_TYPE_EMAIL_OTP"}]},
                                          {"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY"}]}]})
    page.evaluate("(m) => window.walletdTest.startSigning(m)", "mfa in the browser")
    page.wait_for_function("() => window.walletdTest.mfaContext() !== null", timeout=60_000)
    mfa = page.evaluate("() => window.walletdTest.mfaContext()")
    assert mfa["activityStatus"] == "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED"
    assert mfa["organizationId"] == sub_org
    (status,) = mfa["mfaStatuses"]
    assert status["mfaPolicyId"] == policy_id and status["satisfied"] is False
    # The passkey first is the wrong step: refused.
    with pytest.raises(Exception, match="AUTHENTICATION_TYPE_EMAIL_OTP"):
        page.evaluate("(f) => window.walletdTest.approveWithPasskey(f)", mfa["fingerprint"])
    client_key = make_key()
    token = verification_token(proxied.dep, proxied.dep.client(tenant.api.stamper),  # type: ignore[arg-type]
                               proxied.mailbox, email, client_key)
    step = attested_approve(proxied.dep, sub_org, client_key, token, mfa["fingerprint"])
    assert step.status_code == 200, step.text
    assert page.evaluate("(f) => window.walletdTest.approveWithPasskey(f)",
                         mfa["fingerprint"]) == "ACTIVITY_STATUS_COMPLETED"
    signed = page.evaluate("() => window.walletdTest.finishSigning()")
    assert "error" not in signed, signed
    _check_signature(signed, "mfa in the browser")
    shot(page, "core-page-mfa")
    context.close()
