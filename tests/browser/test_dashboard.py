"""The dashboard in headless Chromium: sign in with a one-time link, switch the auth proxy
off and on, change its origins, and see each change take effect on the proxy."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import requests

from tests.browser.conftest import shot
from tests.e2e.auth_proxy.conftest import Proxied
from tests.e2e.auth_proxy.test_webhook_deliveries import failed_delivery
from tests.support.deployment import ROOT
from tests.support.raw_api import RawApi

APP = "https://shop.example.com"


def _link(proxied: Proxied) -> str:
    out = subprocess.run([sys.executable, "-m", "walletd", "dashboard-link"], env=proxied.dep.env,
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    link = out.stdout.strip().splitlines()[-1]
    assert link.startswith(f"{proxied.dep.base_url}/dashboard#link=")
    return link


def _proxy_status(proxied: Proxied, config_id: str, origin: str | None = None) -> int:
    return proxied.call("wallet_kit_config", {}, config_id, origin=origin).status_code


def _until(check: Any, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.3)
    return False


def test_dashboard_controls_the_auth_proxy(browser: Any, proxied: Proxied) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(_link(proxied))
    page.wait_for_selector("#overview-org-id")  # the console opens on its overview
    assert "#link=" not in page.url  # the secret leaves the address bar at once
    page.click("nav a[data-page=proxy]")
    page.wait_for_selector("#proxy-toggle")
    assert page.inner_text("#who-org") == proxied.dep.root.organization_id
    shot(page, "dashboard-signed-in")

    page.click("#proxy-toggle")
    page.wait_for_selector("#config-id")
    assert page.inner_text("#proxy-state") == "on"
    config_id = page.inner_text("#config-id")
    assert _proxy_status(proxied, config_id) == 200
    shot(page, "dashboard-proxy-on")

    page.fill("#origins", APP)
    page.click("#save")
    page.wait_for_selector(".toast:has-text('Saved')")
    assert _until(lambda: _proxy_status(proxied, config_id, "https://evil.example") == 403)
    assert _proxy_status(proxied, config_id, APP) == 200
    assert page.input_value("#origins") == APP
    shot(page, "dashboard-origins")

    page.click("#proxy-toggle")
    page.wait_for_selector("#proxy-state:has-text('off')")
    assert _until(lambda: _proxy_status(proxied, config_id) == 403)
    page.click("#proxy-toggle")
    page.wait_for_selector("#proxy-state:has-text('on')")
    assert _until(lambda: _proxy_status(proxied, config_id, APP) == 200)

    page.click("nav a[data-page=activities]")
    page.wait_for_selector("#activities")
    table = page.inner_text("#activities")
    for kind in ("enable auth proxy", "disable auth proxy", "update auth proxy config"):
        assert kind in table
    assert "✓" in table  # each shows the root user's approving vote
    shot(page, "dashboard-activities")
    page.click("nav a[data-page=proxy-activity]")
    page.wait_for_selector("main#page h1:has-text('Proxy activity')")
    shot(page, "dashboard-proxy-activity")
    context.close()


def test_webhook_deliveries_are_shown_and_replayed(browser: Any, proxied: Proxied) -> None:
    _, delivery_id = failed_delivery(proxied, proxied.dep.root.organization_id)
    context = browser.new_context()
    page = context.new_page()
    page.goto(_link(proxied))
    page.wait_for_selector("#who-org")
    page.click("nav a[data-page=webhooks]")
    page.wait_for_selector("table.deliveries")
    assert "HTTP 410" in page.inner_text("table.deliveries")
    shot(page, "dashboard-webhooks")
    page.click("table.deliveries button:has-text('Replay')")
    page.wait_for_selector(".toast:has-text('queued again')")
    api = RawApi(proxied.dep, proxied.dep.root, proxied.dep.root.organization_id)
    replays = [a for a in api.read("list_activities")["activities"]
               if a["type"] == "ACTIVITY_TYPE_REPLAY_WEBHOOK_DELIVERIES"]
    assert replays and replays[0]["result"]["replayWebhookDeliveriesResult"]["deliveryIds"] == [
        delivery_id]
    context.close()


def test_a_sign_in_link_works_once(browser: Any, proxied: Proxied) -> None:
    link = _link(proxied)
    first = browser.new_context()
    page = first.new_page()
    page.goto(link)
    page.wait_for_selector("#who-org")
    first.close()
    second = browser.new_context()
    page = second.new_page()
    page.goto(link)
    page.wait_for_selector("#signin-error")
    assert "cannot be used" in page.inner_text("#signin-error")
    shot(page, "dashboard-link-used")
    second.close()


def test_the_dashboard_is_served_by_the_api_without_a_build(proxied: Proxied) -> None:
    page = requests.get(f"{proxied.dep.base_url}/dashboard", timeout=10)
    assert page.status_code == 200 and 'type="module"' in page.text
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    script = requests.get(f"{proxied.dep.base_url}/dashboard/stamp.js", timeout=10)
    assert script.status_code == 200 and script.headers["Content-Type"].startswith("text/javascript")
    assert requests.get(f"{proxied.dep.base_url}/dashboard/../infra", timeout=10).status_code == 404


def test_a_root_user_signs_in_with_a_passkey(browser: Any, proxied: Proxied) -> None:
    """A virtual authenticator (Chromium DevTools) holds a passkey registered for the root
    user; the dashboard's passkey button stamps ``stamp_login`` with it."""
    context = browser.new_context()
    page = context.new_page()
    origin = proxied.dep.base_url.replace("127.0.0.1", "localhost")  # an RP ID must be a name
    page.goto(f"{origin}/dashboard")
    page.wait_for_selector("#passkey")
    devtools = context.new_cdp_session(page)
    devtools.send("WebAuthn.enable")
    devtools.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True}})
    attestation = page.evaluate("""async () => {
      const b64 = (b) => btoa(String.fromCharCode(...new Uint8Array(b)))
        .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
      const challenge = crypto.getRandomValues(new Uint8Array(32));
      const cred = await navigator.credentials.create({ publicKey: {
        challenge, rp: { name: 'walletd', id: 'localhost' },
        user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'root', displayName: 'root' },
        pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' } } });
      return { challenge: b64(challenge), credentialId: cred.id,
        clientDataJson: b64(cred.response.clientDataJSON),
        attestationObject: b64(cred.response.attestationObject) };
    }""")
    root = RawApi(proxied.dep, proxied.dep.root, proxied.dep.root.organization_id)
    root.ok("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": proxied.dep.root.user_id, "authenticators": [{
            "authenticatorName": "dashboard passkey", "challenge": attestation["challenge"],
            "attestation": {"credentialId": attestation["credentialId"],
                            "clientDataJson": attestation["clientDataJson"],
                            "attestationObject": attestation["attestationObject"],
                            "transports": ["AUTHENTICATOR_TRANSPORT_INTERNAL"]}}]})
    page.fill("#org", proxied.dep.root.organization_id)
    page.click("#passkey")
    page.wait_for_selector("#who-org")
    assert page.inner_text("#who-org") == proxied.dep.root.organization_id
    shot(page, "dashboard-passkey")
    context.close()
