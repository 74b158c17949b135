"""The production shape: ``walletd auth-proxy`` under gunicorn with two worker processes,
beside gunicorn ingress and separate workers on PostgreSQL, sharing Redis for the rate
limits and for configuration changes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.e2e.auth_proxy.conftest import Proxied, new_tenant, start_production

APP = "https://app.example.com"


@pytest.fixture(scope="module")
def production_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    with start_production(tmp_path_factory.mktemp("proxy-prod")) as proxied:
        yield proxied


def test_changes_reach_every_proxy_process(production_proxy: Proxied) -> None:
    tenant = new_tenant(production_proxy.dep)
    evil = "https://evil.example"
    # Several requests: both gunicorn workers cache the configuration.
    assert {production_proxy.call("wallet_kit_config", {}, tenant.config_id, origin=evil)
            .status_code for _ in range(8)} == {200}
    tenant.update(allowedOrigins=[APP])
    deadline = time.monotonic() + 20
    while production_proxy.call("wallet_kit_config", {}, tenant.config_id,
                                 origin=evil).status_code != 403:
        assert time.monotonic() < deadline
        time.sleep(0.3)
    answers = {production_proxy.call("wallet_kit_config", {}, tenant.config_id, origin=evil)
               .status_code for _ in range(12)}
    assert answers == {403}  # no worker kept the old copy (the cache lives 10 minutes)


def test_the_contact_limit_is_shared_by_the_processes(production_proxy: Proxied) -> None:
    tenant = new_tenant(production_proxy.dep)
    body = {"otpType": "OTP_TYPE_EMAIL", "contact": "shared@example.com"}
    answers = [production_proxy.call("otp_init", body, tenant.config_id).status_code
               for _ in range(6)]
    assert answers[:3] == [200, 200, 200] and set(answers[3:]) == {429}, answers


def test_the_ingress_and_the_proxy_open_no_shared_control_socket(
        production_proxy: Proxied) -> None:
    """gunicorn's control socket defaults to one path per user: two servers on one host
    would take each other's (and its commands can stop workers). Both serve without it."""
    dep = production_proxy.dep
    for name in ("ingress", "auth-proxy"):
        log = (dep.workdir / f"{name}.log").read_text(errors="replace")
        assert "Booting worker" in log, log[-2000:]
        assert "Control socket" not in log, log[-2000:]
