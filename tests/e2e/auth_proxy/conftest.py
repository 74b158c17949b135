"""A ``walletd up`` whose auth proxy the tests call, and organizations that enabled it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support import services
from tests.support.deployment import Deployment, free_port, make_organization
from tests.support.mailboxes import Mailbox, SmsApi, start_smtp
from tests.support.raw_api import RawApi


@dataclass
class Proxied:
    """A deployment, the URL of its auth proxy, and where its codes are delivered."""

    dep: Deployment
    proxy_url: str
    mailbox: Mailbox
    sms: SmsApi

    def call(self, name: str, body: dict[str, Any] | bytes | None, config_id: str | None,
             origin: str | None = None, **headers: str) -> requests.Response:
        """``POST /v1/<name>`` as a browser on ``origin`` would."""
        sent = dict(headers)
        if config_id is not None:
            sent["X-Auth-Proxy-Config-Id"] = config_id
        if origin is not None:
            sent["Origin"] = origin
        if isinstance(body, dict):
            return requests.post(f"{self.proxy_url}/v1/{name}", json=body, headers=sent, timeout=30)
        return requests.post(f"{self.proxy_url}/v1/{name}", data=body, headers=sent, timeout=30)


@contextmanager
def start(tmp: Any, **env: str) -> Iterator[Proxied]:
    """``walletd up`` with its auth proxy, a loopback SMTP server and SMS API."""
    controller, mailbox, smtp_port = start_smtp()
    sms = SmsApi().start()
    port = free_port()
    dep = Deployment.embedded(tmp, extra_env={
        "WALLETD_AUTH_PROXY_PORT": str(port), "WALLETD_AUTH_PROXY_CONFIG_TTL_S": "600",
        "WALLETD_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}",
        "WALLETD_EMAIL_FROM": "Wallet App <login@wallet.example>",
        "WALLETD_SMS_URL": sms.url, "WALLETD_SMS_ACCOUNT_SID": sms.sid,
        "WALLETD_SMS_AUTH_TOKEN": sms.token, "WALLETD_SMS_FROM": "+15550000000", **env})
    try:
        yield Proxied(dep, f"http://127.0.0.1:{port}", mailbox, sms)
    finally:
        dep.stop()
        sms.stop()
        controller.stop()


@contextmanager
def start_production(tmp: Any, **env: str) -> Iterator[Proxied]:
    """The production shape: ``walletd auth-proxy`` under gunicorn (two worker processes)
    beside gunicorn ingress and separate workers on a PostgreSQL database of its own, sharing
    Redis (the broker, the rate limits, configuration changes), a loopback SMTP server."""
    db = services.create_database()
    redis = services.redis_url()
    controller, mailbox, smtp_port = start_smtp()
    sms = SmsApi().start()
    port = free_port()
    dep = Deployment.production(Path(tmp), db, redis, extra_env={
        "WALLETD_RATE_LIMIT_URL": redis, "WALLETD_AUTH_PROXY_CONFIG_TTL_S": "600",
        "WALLETD_AUTH_PROXY_PORT": str(port), "WALLETD_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}",
        **env})
    try:
        dep.env["WALLETD_API_URL"] = dep.base_url
        url = f"http://127.0.0.1:{port}"
        dep.start_auth_proxy(url)
        yield Proxied(dep, url, mailbox, sms)
    finally:
        dep.stop()
        sms.stop()
        controller.stop()
        services.drop_database(db)


@pytest.fixture(scope="package")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    with start(tmp_path_factory.mktemp("proxied")) as running:
        yield running


@dataclass
class Tenant:
    """A top-level organization with its auth proxy enabled."""

    api: RawApi
    config_id: str
    proxy_user_id: str

    def update(self, **fields: Any) -> None:
        completed(self.api, "update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG",
                  fields)


def completed(api: RawApi, path: str, type_: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """Submit and wait for completion (a loaded machine may answer PENDING first)."""
    response = api.submit(path, type_, parameters)
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    deadline = time.monotonic() + 60
    while activity["status"] == "ACTIVITY_STATUS_PENDING" and time.monotonic() < deadline:
        time.sleep(0.3)
        activity = api.read("get_activity", {"activityId": activity["id"]})["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED", activity
    (result,) = activity["result"].values()
    return result  # type: ignore[no-any-return]


def new_tenant(dep: Deployment, **fields: Any) -> Tenant:
    key = make_organization(dep, "proxy tenant")
    api = RawApi(dep, key, key.organization_id)
    user_id = completed(api, "enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})["userId"]
    tenant = Tenant(api, api.read("get_auth_proxy_config")["config"]["configId"], user_id)
    if fields:
        tenant.update(**fields)
    return tenant


@pytest.fixture
def tenant(proxied: Proxied) -> Tenant:
    return new_tenant(proxied.dep)
