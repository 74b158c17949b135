"""The official client gets ACTIVITY_STATUS_PENDING and completes by polling get_activity.

Production path: the executors are stopped while the client submits, so the activity is
certainly PENDING; they are restarted while the client polls. Embedded path (worker threads
cannot be stopped from outside): a zero synchronous wait makes the submit answer before the
in-process workers finish, almost always PENDING; an attempt that finished first is retried.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from turnkey_sdk_types import CreateApiKeysBody, GetApiKeysBody

from tests.support.deployment import Deployment
from tests.support.keys import make_key

SUBMIT = "/public/v1/submit/create_api_keys"
POLL = "/public/v1/query/get_activity"


@pytest.fixture(params=["embedded", "production"])
def slow_deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    env = {"WALLETD_SYNC_WAIT_MS": "0"}
    if request.param == "embedded":
        dep = Deployment.embedded(tmp_path, extra_env=env)
        yield dep
        dep.stop()
        return
    from tests.support import services

    db, vhost = services.create_database(), services.create_vhost()
    dep = Deployment.production(tmp_path, db, vhost, extra_env=env)
    yield dep
    dep.stop()
    services.drop_database(db)
    services.delete_vhost(vhost)


class Recorder:
    """Wraps the official client's one HTTP method to see what it got back, in order."""

    def __init__(self, client: Any) -> None:
        self.calls: list[tuple[str, str]] = []
        self._request = client._request
        client._request = self

    def __call__(self, url: str, body: dict, response_type: type) -> Any:
        response = self._request(url, body, response_type)
        status = response.activity.status
        self.calls.append((url, getattr(status, "value", status)))
        return response

    def statuses(self, url: str) -> list[str]:
        return [s for u, s in self.calls if u == url]


def _recorded_client(dep: Deployment) -> tuple[Any, Recorder]:
    client = dep.client(polling_interval_ms=200, max_polling_retries=300)
    return client, Recorder(client)


def _create_key(client: Any, dep: Deployment) -> tuple[Any, str]:
    key = make_key()
    response = client.create_api_keys(CreateApiKeysBody(
        userId=dep.root.user_id, apiKeys=[key.api_key_params("polled", "3600")]))
    return response, key.public_key


def _assert_polled_to_completion(dep: Deployment, response: Any, recorder: Recorder,
                                 public_key: str) -> None:
    assert recorder.statuses(SUBMIT) == ["ACTIVITY_STATUS_PENDING"]
    polled = recorder.statuses(POLL)
    assert polled and polled[-1] == "ACTIVITY_STATUS_COMPLETED"
    assert set(polled[:-1]) <= {"ACTIVITY_STATUS_PENDING"}
    assert len(response.apiKeyIds) == 1
    keys = dep.client().get_api_keys(GetApiKeysBody(userId=dep.root.user_id)).apiKeys
    created = [k for k in keys if k.credential.publicKey == public_key]
    assert [k.apiKeyId for k in created] == response.apiKeyIds


def test_client_polls_a_pending_activity_to_completion(slow_deployment: Deployment) -> None:
    dep = slow_deployment
    if "executors" not in dep.processes:   # embedded
        for _ in range(5):
            client, recorder = _recorded_client(dep)
            response, public_key = _create_key(client, dep)
            if recorder.statuses(SUBMIT) == ["ACTIVITY_STATUS_PENDING"]:
                break
        _assert_polled_to_completion(dep, response, recorder, public_key)
        return

    dep.kill("executors")
    client, recorder = _recorded_client(dep)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = _create_key(client, dep)
        except Exception as ex:  # reported by the assertion below
            outcome["error"] = ex

    client_thread = threading.Thread(target=run)
    client_thread.start()
    # Restart the executors once the client has been answered PENDING and has polled.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and client_thread.is_alive() and not recorder.statuses(POLL):
        time.sleep(0.1)
    assert recorder.statuses(POLL)[:1] == ["ACTIVITY_STATUS_PENDING"]
    dep.start_worker("executors")
    client_thread.join(90)
    assert "error" not in outcome, outcome.get("error")
    response, public_key = outcome["result"]
    _assert_polled_to_completion(dep, response, recorder, public_key)
