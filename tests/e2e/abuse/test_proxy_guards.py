"""The smaller items of issue 19 against ``walletd up``: captcha enforced through a loopback
``siteverify`` double (and refused where no verifier is configured), the proxy's per-address
limit reading ``X-Forwarded-For`` with a configured hop count, and ``/metrics`` behind a
bearer token."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import pytest
import requests

from tests.e2e.abuse.conftest import APP, World
from tests.e2e.auth_proxy.conftest import Proxied, Tenant, new_tenant, start

SECRET = "captcha-secret"
GOOD = "solved-captcha"
METRICS_TOKEN = "metrics-bearer-token"


class SiteVerify:
    """A loopback hCaptcha/Turnstile ``siteverify``: success for :data:`GOOD` and the secret."""

    def __init__(self) -> None:
        self.seen: list[dict[str, list[str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                outer.seen.append(form)
                ok = form.get("secret") == [SECRET] and form.get("response") == [GOOD]
                body = json.dumps({"success": ok}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/siteverify"

    def stop(self) -> None:
        self.server.shutdown()


@pytest.fixture(scope="module")
def siteverify() -> Iterator[SiteVerify]:
    double = SiteVerify()
    yield double
    double.stop()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory,
            siteverify: SiteVerify) -> Iterator[Proxied]:
    with start(tmp_path_factory.mktemp("guarded"), WALLETD_CAPTCHA_VERIFY_URL=siteverify.url,
               WALLETD_CAPTCHA_SECRET=SECRET, WALLETD_RATE_LIMIT_FORWARDED_HOPS="1",
               WALLETD_AUTH_PROXY_RATE_ADDRESS="4",
               WALLETD_METRICS_TOKEN=METRICS_TOKEN) as running:
        yield running


def test_captcha_cannot_be_enabled_without_a_verifier(world: World, tenant: Tenant) -> None:
    refused = tenant.api.submit("update_auth_proxy_config",
                                "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {"captchaEnabled": True})
    assert refused.status_code == 400, refused.text
    assert "WALLETD_CAPTCHA_VERIFY_URL" in refused.json()["message"]
    assert tenant.api.read("get_auth_proxy_config")["config"]["captchaEnabled"] is False


def test_captcha_is_enforced_through_the_verifier(guarded: Proxied,
                                                  siteverify: SiteVerify) -> None:
    tenant = new_tenant(guarded.dep, allowedOrigins=[APP], captchaEnabled=True)

    def otp_init(contact: str, **headers: str) -> requests.Response:
        return guarded.call("otp_init", {"otpType": "OTP_TYPE_EMAIL", "contact": contact},
                            tenant.config_id, origin=APP, **{"X-Forwarded-For": contact,
                                                             **headers})

    missing = otp_init("198.51.100.1")
    assert missing.status_code == 403 and "X-Captcha-Token" in missing.json()["message"]
    wrong = otp_init("198.51.100.2", **{"X-Captcha-Token": "guessed"})
    assert wrong.status_code == 403 and "did not verify" in wrong.json()["message"]
    solved = otp_init("198.51.100.3", **{"X-Captcha-Token": GOOD})
    assert solved.status_code == 400  # past the captcha: "198.51.100.3" is not an email
    assert siteverify.seen[-1]["remoteip"] == ["198.51.100.3"]
    signup = guarded.call("signup_v2", {"apiKeys": []}, tenant.config_id, origin=APP,
                          **{"X-Forwarded-For": "198.51.100.4"})
    assert signup.status_code == 403, signup.text
    sent = guarded.call("otp_init", {"otpType": "OTP_TYPE_EMAIL", "contact": "cap@example.com"},
                        tenant.config_id, origin=APP,
                        **{"X-Forwarded-For": "198.51.100.5", "X-Captcha-Token": GOOD})
    assert sent.status_code == 200, sent.text


def test_the_proxy_counts_the_forwarded_client_address(guarded: Proxied) -> None:
    tenant = new_tenant(guarded.dep, allowedOrigins=[APP])

    def config(forwarded: str) -> int:
        return guarded.call("wallet_kit_config", {}, tenant.config_id, origin=APP,
                            **{"X-Forwarded-For": forwarded}).status_code

    # Behind one trusted proxy every client has its own budget of 4 a minute.
    assert [config(f"203.0.113.{i}") for i in range(1, 9)] == [200] * 8
    assert [config("203.0.113.50") for _ in range(4)] == [200] * 4
    assert config("203.0.113.50") == 429
    # A forged left-most entry does not buy a fresh budget.
    assert config("1.2.3.4, 203.0.113.50") == 429


def test_metrics_need_the_bearer_token(guarded: Proxied) -> None:
    url = guarded.dep.base_url + "/metrics"
    assert requests.get(url, timeout=10).status_code == 401
    assert requests.get(url, headers={"Authorization": "Bearer wrong"},
                        timeout=10).status_code == 401
    scraped = requests.get(url, headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10)
    assert scraped.status_code == 200
    assert "walletd_webhook_backlog" in scraped.text
