"""Activity webhooks against running deployments and a real receiver on 127.0.0.1.

Both paths (``walletd up`` and gunicorn + PostgreSQL + RabbitMQ + separate notifier
processes) run with ``WALLETD_WEBHOOK_ALLOW=127.0.0.1`` so plain-http loopback receivers are
allowed. Endpoints are managed through the official ``turnkey-http`` client; signatures are
verified with ``cryptography`` against the served JWKS.
"""

from __future__ import annotations

import base64
import functools
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import text
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreateWebhookEndpointBody,
    DeleteWebhookEndpointBody,
    GetActivitiesBody,
    ListWebhookEndpointsBody,
    RemoveOrganizationFeatureBody,
    SetOrganizationFeatureBody,
    UpdateUserNameBody,
    UpdateWebhookEndpointBody,
    v1WebhookSubscriptionParams,
)

from tests.support import services
from tests.support.deployment import Deployment, Key, database_url, make_organization
from tests.support.webhook_receiver import Received, Reply, WebhookReceiver

ALLOW = {"WALLETD_WEBHOOK_ALLOW": "127.0.0.1"}
ACTIVITY_UPDATES = [v1WebhookSubscriptionParams(eventType="ACTIVITY_UPDATES")]


@pytest.fixture(scope="module")
def hooked_embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    dep = Deployment.embedded(tmp_path_factory.mktemp("hooks-embedded"), extra_env=ALLOW)
    yield dep
    dep.stop()


@pytest.fixture(scope="module")
def hooked_production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    services.require("PostgreSQL", "127.0.0.1", 5432)
    services.require("RabbitMQ", "127.0.0.1", 5672)
    db, vhost = services.create_database(), services.create_vhost()
    dep = Deployment.production(tmp_path_factory.mktemp("hooks-production"), db, vhost, extra_env=ALLOW)
    yield dep
    dep.stop()
    services.drop_database(db)
    services.delete_vhost(vhost)


@pytest.fixture(params=["embedded", "production"])
def dep(request: pytest.FixtureRequest) -> Deployment:
    deployment: Deployment = request.getfixturevalue(f"hooked_{request.param}")
    return deployment


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver(hang_limit_s=20.0) as server:
        yield server


def _until(predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


def _endpoint(dep: Deployment, url: str, key: Key | None = None) -> str:
    response = dep.client(key).create_webhook_endpoint(
        CreateWebhookEndpointBody(url=url, name="e2e receiver", subscriptions=ACTIVITY_UPDATES)
    )
    assert response.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    return str(response.endpointId)


def _drop_endpoint(dep: Deployment, endpoint_id: str, key: Key | None = None) -> None:
    dep.client(key).delete_webhook_endpoint(DeleteWebhookEndpointBody(endpointId=endpoint_id))


def _rename(dep: Deployment, key: Key | None = None, name: str = "renamed") -> str:
    key = key or dep.root
    response = dep.client(key).update_user_name(UpdateUserNameBody(userId=key.user_id, userName=name))
    return str(response.activity.id)


def _for(receiver: WebhookReceiver, activity_id: str) -> list[Received]:
    return [r for r in receiver.accepted() if r.json().get("id") == activity_id]


def _completed_for(receiver: WebhookReceiver, activity_id: str) -> list[Received]:
    return [r for r in _for(receiver, activity_id) if r.json()["status"] == "ACTIVITY_STATUS_COMPLETED"]


def _arrived_twice(receiver: WebhookReceiver, activity_id: str) -> bool:
    return len(_for(receiver, activity_id)) >= 2


def _sql(dep: Deployment, query: str, **params: Any) -> list[Any]:
    from infra.db.engine import make_engine

    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with engine.connect() as conn:
            return list(conn.execute(text(query), params))
    finally:
        engine.dispose()


def _sql_write(dep: Deployment, statement: str, **params: Any) -> None:
    from infra.db.engine import make_engine

    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with engine.begin() as conn:
            conn.execute(text(statement), params)
    finally:
        engine.dispose()


def _verify(dep: Deployment, got: Received) -> None:
    response = requests.get(dep.base_url + "/public/v1/discovery/webhooks/jwks", timeout=10)
    assert response.headers["Cache-Control"] == (
        "public, max-age=86400, s-maxage=86400, stale-if-error=604800"
    )
    kid = got.header("X-Turnkey-Signature-Key-Id")
    entry = next(k for k in response.json()["keys"] if k["kid"] == kid)
    assert (entry["kty"], entry["crv"], entry["alg"]) == ("OKP", "Ed25519", "EdDSA")
    public = base64.urlsafe_b64decode(entry["x"] + "=" * (-len(entry["x"]) % 4))
    message = (
        f"v1.ed25519.{kid}.{got.header('X-Turnkey-Timestamp')}.{got.header('X-Turnkey-Event-Id')}."
    ).encode() + got.body
    Ed25519PublicKey.from_public_bytes(public).verify(
        bytes.fromhex(got.header("X-Turnkey-Signature") or ""), message
    )


def test_endpoint_lifecycle_through_the_official_client(dep: Deployment, receiver: WebhookReceiver) -> None:
    client = dep.client()
    endpoint_id = _endpoint(dep, receiver.url)
    listed = client.list_webhook_endpoints(ListWebhookEndpointsBody())
    mine = next(e for e in listed.webhookEndpoints if e.endpointId == endpoint_id)
    assert (mine.url, mine.name, mine.isActive) == (receiver.url, "e2e receiver", True)
    assert mine.organizationId == dep.root.organization_id
    assert mine.subscriptions and mine.subscriptions[0].eventType == "ACTIVITY_UPDATES"

    updated = client.update_webhook_endpoint(
        UpdateWebhookEndpointBody(endpointId=endpoint_id, name="paused", isActive=False)
    )
    assert updated.webhookEndpoint.name == "paused" and updated.webhookEndpoint.isActive is False
    _drop_endpoint(dep, endpoint_id)
    listed = client.list_webhook_endpoints(ListWebhookEndpointsBody())
    assert endpoint_id not in {e.endpointId for e in listed.webhookEndpoints}


@pytest.mark.parametrize(
    "url", ["http://example.com/hook", "https://10.0.0.1/hook", "https://u:p@example.com/"]
)
def test_unsafe_endpoint_urls_are_refused(dep: Deployment, url: str) -> None:
    with pytest.raises(TurnkeyNetworkError):
        dep.client().create_webhook_endpoint(
            CreateWebhookEndpointBody(url=url, name="bad", subscriptions=ACTIVITY_UPDATES)
        )


def test_activity_updates_arrive_once_each_and_verify_against_served_jwks(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    endpoint_id = _endpoint(dep, receiver.url)
    try:
        activity_id = _rename(dep)
        _until(lambda: _completed_for(receiver, activity_id))
        got = _until(lambda: len(_for(receiver, activity_id)) >= 2 and _for(receiver, activity_id))
        assert sorted(r.json()["status"] for r in got) == [
            "ACTIVITY_STATUS_COMPLETED",
            "ACTIVITY_STATUS_PENDING",
        ]
        ids = [r.header("X-Turnkey-Event-Id") for r in got]
        assert len(set(ids)) == len(ids)
        completed = _completed_for(receiver, activity_id)[0]
        payload = completed.json()
        assert payload["organizationId"] == dep.root.organization_id
        assert payload["type"] == "ACTIVITY_TYPE_UPDATE_USER_NAME"
        assert {"intent", "result", "votes", "fingerprint", "createdAt"} <= payload.keys()
        assert completed.header("X-Turnkey-Event-Type") == "ACTIVITY_UPDATES"
        assert completed.header("X-Turnkey-Organization-Id") == dep.root.organization_id
        _verify(dep, completed)
    finally:
        _drop_endpoint(dep, endpoint_id)


def test_receiver_down_then_up_everything_arrives_once_by_event_id(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    endpoint_id = _endpoint(dep, receiver.url)
    receiver.stop()
    try:
        activity_ids = [_rename(dep, name=f"down-{i}") for i in range(3)]

        def all_tried() -> bool:
            rows = _sql(
                dep,
                "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = :e AND attempts > 0",
                e=endpoint_id,
            )
            return rows[0][0] >= 2 * len(activity_ids)

        _until(all_tried)
        receiver.start()
        for activity_id in activity_ids:
            _until(functools.partial(_arrived_twice, receiver, activity_id))
        event_ids = [r.header("X-Turnkey-Event-Id") for a in activity_ids for r in _for(receiver, a)]
        assert len(event_ids) == 2 * len(activity_ids) == len(set(event_ids))
    finally:
        _drop_endpoint(dep, endpoint_id)


def test_server_error_then_success_is_retried_and_every_attempt_recorded(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    endpoint_id = _endpoint(dep, receiver.url)
    try:
        receiver.script([Reply(500, b"down for a moment"), Reply(500), Reply(500), Reply(500)])
        activity_id = _rename(dep, name="flaky")
        _until(lambda: len(_for(receiver, activity_id)) >= 2)
        rows = _sql(
            dep,
            "SELECT a.status_code, a.response_excerpt FROM webhook_attempts a "
            "JOIN webhook_deliveries d ON d.id = a.delivery_id "
            "WHERE d.endpoint_id = :e ORDER BY a.started_at",
            e=endpoint_id,
        )
        codes = [r[0] for r in rows]
        assert codes.count(500) == 4 and 200 in codes
        assert ("down for a moment" in [r[1] for r in rows]) is True
    finally:
        _drop_endpoint(dep, endpoint_id)


def test_parent_organization_receives_its_sub_organization_events(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    sub = make_organization(dep, "webhook sub", parent_id=dep.root.organization_id)
    endpoint_id = _endpoint(dep, receiver.url)
    try:
        activity_id = _rename(dep, key=sub, name="sub-user")
        got = _until(lambda: _completed_for(receiver, activity_id))
        assert got[0].json()["organizationId"] == sub.organization_id
        assert got[0].header("X-Turnkey-Organization-Id") == sub.organization_id
        _verify(dep, got[0])
    finally:
        _drop_endpoint(dep, endpoint_id)


def test_notifier_killed_mid_delivery_still_delivers_and_never_resends_success(
    hooked_production: Deployment, receiver: WebhookReceiver
) -> None:
    dep = hooked_production
    endpoint_id = _endpoint(dep, receiver.url)
    try:
        receiver.wait_for(1, timeout_s=60)  # the endpoint's own creation event
        receiver.script([Reply(hang=True)])
        activity_id = _rename(dep, name="killed")
        receiver.wait_for(2, timeout_s=60)  # the notifier is now inside the POST
        dep.kill("notifier")
        receiver.release()
        dep.start_worker("notifier")
        _until(lambda: len(_for(receiver, activity_id)) >= 3, timeout=120)

        def settled() -> bool:
            rows = _sql(
                dep,
                "SELECT count(*) FROM webhook_deliveries WHERE activity_id = :a "
                "AND endpoint_id = :e AND status = 'SUCCEEDED'",
                a=activity_id,
                e=endpoint_id,
            )
            return rows[0][0] == 2

        _until(settled, timeout=60)
        delivered = len(_for(receiver, activity_id))
        later = _rename(dep, name="after-kill")  # a later event flows; nothing settled is resent
        _until(lambda: len(_for(receiver, later)) >= 2)
        assert len(_for(receiver, activity_id)) == delivered
        events = {r.header("X-Turnkey-Event-Id") for r in _for(receiver, activity_id)}
        assert len(events) == 2
    finally:
        _drop_endpoint(dep, endpoint_id)


def test_endpoint_failing_for_days_is_disabled_and_the_organization_sees_it(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    endpoint_id = _endpoint(dep, receiver.url)
    receiver.wait_for(1, timeout_s=60)  # its creation event: the endpoint has worked
    receiver.script([Reply(503)] * 50)
    _sql_write(
        dep,
        "UPDATE webhook_endpoints SET failing_since = :t WHERE id = :e",
        t=datetime.now(UTC) - timedelta(days=6),
        e=endpoint_id,
    )
    try:
        _rename(dep, name="into-the-void")
        client = dep.client()

        def disabled() -> bool:
            listed = client.list_webhook_endpoints(ListWebhookEndpointsBody())
            mine = [e for e in listed.webhookEndpoints if e.endpointId == endpoint_id]
            return bool(mine) and mine[0].isActive is False

        _until(disabled)
        activities = client.get_activities(
            GetActivitiesBody(filterByType=["ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT"])
        ).activities
        shown = [
            a
            for a in activities
            if a.type.value == "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT"
            and a.intent.updateWebhookEndpointIntent
            and a.intent.updateWebhookEndpointIntent.endpointId == endpoint_id
        ]
        assert len(shown) == 1
        assert shown[0].status.value == "ACTIVITY_STATUS_COMPLETED"
        assert shown[0].intent.updateWebhookEndpointIntent.isActive is False
    finally:
        _drop_endpoint(dep, endpoint_id)


def test_legacy_webhook_feature_receives_activity_updates(dep: Deployment, receiver: WebhookReceiver) -> None:
    client = dep.client()
    client.set_organization_feature(
        SetOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK", value=receiver.url)
    )
    try:
        activity_id = _rename(dep, name="via-feature")
        got = _until(lambda: _completed_for(receiver, activity_id))
        _verify(dep, got[0])
        listed = client.list_webhook_endpoints(ListWebhookEndpointsBody())
        assert receiver.url not in {e.url for e in listed.webhookEndpoints}  # not an API endpoint
    finally:
        client.remove_organization_feature(RemoveOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK"))
    later = _rename(dep, name="feature-removed")
    # Outbox rows are written with the status change: none exist once the feature is gone.
    rows = _sql(dep, "SELECT count(*) FROM webhook_deliveries WHERE activity_id = :a", a=later)
    assert rows[0][0] == 0


@pytest.mark.parametrize("url", ["http://10.0.0.1/hook", "https://10.0.0.1/hook", "http://example.com/hook"])
def test_webhook_feature_url_is_checked_like_an_endpoint_url(dep: Deployment, url: str) -> None:
    with pytest.raises(TurnkeyNetworkError) as refused:
        dep.client().set_organization_feature(
            SetOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK", value=url)
        )
    assert refused.value.status_code == 400
    assert "invalid value for FEATURE_NAME_WEBHOOK" in str(refused.value)
    assert not any(active for _, active in _feature_endpoint(dep))


def _feature_endpoint(dep: Deployment) -> list[Any]:
    return _sql(
        dep,
        "SELECT id, is_active FROM webhook_endpoints WHERE organization_id = :o AND source = 'feature'",
        o=dep.root.organization_id,
    )


def test_webhook_feature_removed_then_set_again_to_the_same_url_delivers(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    client = dep.client()
    feature = SetOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK", value=receiver.url)
    client.set_organization_feature(feature)
    client.remove_organization_feature(RemoveOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK"))
    client.set_organization_feature(feature)
    try:
        assert [bool(active) for _, active in _feature_endpoint(dep)] == [True]
        activity_id = _rename(dep, name="feature-back")
        assert _until(lambda: _completed_for(receiver, activity_id))
    finally:
        client.remove_organization_feature(RemoveOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK"))


def test_webhook_feature_endpoint_disabled_for_failing_is_reactivated_by_setting_the_feature(
    dep: Deployment, receiver: WebhookReceiver
) -> None:
    client = dep.client()
    feature = SetOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK", value=receiver.url)
    client.set_organization_feature(feature)
    try:
        ((endpoint_id, _),) = _feature_endpoint(dep)
        # What the notifier does to an endpoint that failed for days.
        _sql_write(
            dep,
            "UPDATE webhook_endpoints SET is_active = false, disabled_at = :t, failing_since = :t,"
            " disabled_reason = 'failing' WHERE id = :e",
            t=datetime.now(UTC) - timedelta(days=1),
            e=endpoint_id,
        )
        silent = _rename(dep, name="while-disabled")
        client.set_organization_feature(feature)  # the same URL: turns it back on
        assert [(e, bool(active)) for e, active in _feature_endpoint(dep)] == [(endpoint_id, True)]
        activity_id = _rename(dep, name="re-enabled")
        assert _until(lambda: _completed_for(receiver, activity_id))
        assert _for(receiver, silent) == []
    finally:
        client.remove_organization_feature(RemoveOrganizationFeatureBody(name="FEATURE_NAME_WEBHOOK"))


def test_jwks_is_public_and_cacheable(dep: Deployment, tmp_path: Path) -> None:
    response = requests.get(dep.base_url + "/public/v1/discovery/webhooks/jwks", timeout=10)
    assert response.status_code == 200
    keys = response.json()["keys"]
    assert keys and all(k["turnkey_signature_version"] == "v1" for k in keys)
    assert "d" not in keys[0]  # never a private member
