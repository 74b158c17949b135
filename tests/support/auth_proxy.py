"""Auth proxy helpers for tests: read a configuration as the proxy does, open its key."""

from __future__ import annotations

import json
import time
from typing import Any

import requests

from infra.authproxy.keys import ProxyKey
from infra.crypto import hpke
from infra.settings import Settings
from tests.support.deployment import Deployment
from tests.support.keys import TestKey


def proxy_key(dep: Deployment) -> ProxyKey:
    """The deployment's auth proxy key (from its data dir, as the proxy loads it)."""
    return ProxyKey.load(Settings.from_env(dep.env))


def config_body(config_id: str) -> bytes:
    return json.dumps({"configId": config_id,
                       "timestampMs": str(time.time_ns() // 1_000_000)}).encode()


def read_config(dep: Deployment, config_id: str) -> requests.Response:
    """``POST /public/v1/auth_proxy/config`` stamped with the proxy key."""
    body = config_body(config_id)
    return dep.post("/public/v1/auth_proxy/config", body,
                    {"X-Stamp": proxy_key(dep).stamp(body), "Content-Type": "application/json"})


def proxy_api_key(dep: Deployment, config_id: str) -> TestKey:
    """The proxy user's API key, opened with the proxy key (what the proxy signs with)."""
    response = read_config(dep, config_id)
    assert response.status_code == 200, response.text
    config: dict[str, Any] = response.json()["config"]
    with proxy_key(dep).api_key(config["sealedApiKey"]) as private:
        public = hpke.compressed(private.public_key()).hex()
        assert public == config["apiPublicKey"]
        return TestKey("API_KEY_CURVE_P256", public,
                       format(private.private_numbers().private_value, "064x"), private)
