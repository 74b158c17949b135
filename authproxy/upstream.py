"""The public API as the proxy sees it: configurations (cached) and stamped activities.

A configuration is read with ``POST /public/v1/auth_proxy/config`` stamped with the proxy
key and kept ``WALLETD_AUTH_PROXY_CONFIG_TTL_S`` seconds; every change to it (an
``update_auth_proxy_config``, ``enable``/``disable``) bumps its ``version``, and
:meth:`Upstream.forget` drops a cached copy. Activities are stamped with the proxy user's
API key, opened from its sealed form only for the duration of that one request.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests

from authproxy.tokens import TokenKeys
from infra.authproxy.keys import ProxyKey, stamp_with
from infra.authproxy.lookup import PATH as CONFIG_PATH
from infra.clock import now_ms
from infra.errors import FailedPrecondition, Unavailable
from ingress.errors import HTTP_STATUS

#: Upstream call timeout (seconds): the API's own synchronous wait plus a margin.
TIMEOUT_S = 30
#: Statuses of an activity still on its way (polled until it settles).
UNSETTLED = frozenset({"ACTIVITY_STATUS_CREATED", "ACTIVITY_STATUS_PENDING"})


class Forwarded(Exception):
    """An error answer of the API, to be passed on to the browser as it came."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("message", ""))
        self.status = status
        self.body = body


@dataclass(frozen=True)
class Config:
    """One configuration as the proxy uses it."""

    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["configId"])

    @property
    def organization_id(self) -> str:
        return str(self.data["organizationId"])

    @property
    def enabled(self) -> bool:
        return bool(self.data["enabled"])

    def __getitem__(self, name: str) -> Any:
        return self.data[name]


class Upstream:
    """HTTP client of the public API for one proxy process (thread-safe)."""

    def __init__(self, api_url: str, proxy_key: ProxyKey, ttl_s: float) -> None:
        self.api_url = api_url.rstrip("/")
        self.proxy_key = proxy_key
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[float, Config]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        self.token_keys = TokenKeys(self.api_url)

    def _http(self) -> requests.Session:
        http = getattr(self._local, "http", None)
        if http is None:
            http = self._local.http = requests.Session()
        return http

    def _post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        try:
            response = self._http().post(self.api_url + path, data=body, timeout=TIMEOUT_S,
                                         headers={"Content-Type": "application/json", **headers})
        except requests.RequestException as ex:
            raise Unavailable("the auth proxy cannot reach the API; retry shortly") from ex
        try:
            payload = response.json()
        except ValueError:
            payload = {"code": 13, "message": f"the API answered HTTP {response.status_code}",
                       "details": []}
        return response.status_code, payload

    # -- configurations ------------------------------------------------------------------
    def config(self, config_id: str) -> Config:
        """The configuration ``config_id`` (cached for the TTL).

        Raises:
            Forwarded: the API's answer (404 for an unknown id).
        """
        with self._lock:
            cached = self._cache.get(config_id)
        if cached and time.monotonic() - cached[0] < self.ttl_s:
            return cached[1]
        body = json.dumps({"configId": config_id, "timestampMs": str(now_ms())}).encode()
        status, payload = self._post(CONFIG_PATH, body, {"X-Stamp": self.proxy_key.stamp(body)})
        if status != 200:
            raise Forwarded(status, payload)
        config = Config(payload["config"])
        with self._lock:
            self._cache[config_id] = (time.monotonic(), config)
        return config

    def forget(self, config_id: str) -> None:
        """Drop the cached copy of ``config_id`` (the next request reads it again)."""
        with self._lock:
            self._cache.pop(config_id, None)

    # -- activities and queries ------------------------------------------------------------
    def _stamped(self, config: Config, path: str, data: dict[str, Any]) -> tuple[int, Any]:
        body = json.dumps(data, separators=(",", ":")).encode()
        with self.proxy_key.api_key(config["sealedApiKey"]) as private:
            stamp = stamp_with(private, body)
        return self._post(path, body, {"X-Stamp": stamp})

    def submit(self, config: Config, path: str, type_: str, parameters: dict[str, Any],
               organization_id: str | None = None) -> dict[str, Any]:
        """Submit an activity as the proxy user; the result body of the completed activity.

        Raises:
            Forwarded: the API refused it (the browser gets the same status and body).
            FailedPrecondition: it did not complete synchronously (needs approval).
        """
        status, payload = self._stamped(config, f"/public/v1/submit/{path}", {
            "type": type_, "timestampMs": str(now_ms()),
            "organizationId": organization_id or config.organization_id,
            "parameters": {k: v for k, v in parameters.items() if v is not None}})
        if status != 200:
            raise Forwarded(status, payload)
        activity = self._settled(config, payload["activity"])
        if activity.get("status") != "ACTIVITY_STATUS_COMPLETED":
            raise FailedPrecondition(
                f"activity {activity.get('id')} is {activity.get('status')}; the proxy only "
                "runs activities that complete at once (check the organization's policies)")
        (result,) = (activity.get("result") or {"": {}}).values()
        return result

    def _settled(self, config: Config, activity: dict[str, Any]) -> dict[str, Any]:
        """Poll an activity the API answered before it finished (as clients do), up to
        ``TIMEOUT_S``; a failure found while polling comes back as the API's error."""
        deadline = time.monotonic() + TIMEOUT_S
        delay = 0.1
        while activity.get("status") in UNSETTLED and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
            activity = self.query(config, "get_activity", {"activityId": activity["id"]})["activity"]
        if activity.get("status") == "ACTIVITY_STATUS_FAILED" and activity.get("failure"):
            failure = activity["failure"]
            status = HTTP_STATUS.get(int(failure.get("code", 13)), "500 Internal Server Error")
            raise Forwarded(int(status.split()[0]), failure)
        return activity

    def query(self, config: Config, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """A query as the proxy user, in the configuration's organization."""
        status, payload = self._stamped(config, f"/public/v1/query/{path}",
                                        {"organizationId": config.organization_id, **body})
        if status != 200:
            raise Forwarded(status, payload)
        return payload
