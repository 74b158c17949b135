"""Endpoint validation and wire rendering (no database)."""

from __future__ import annotations

import pytest

from infra.db.models.webhooks import SOURCE_FEATURE, WebhookEndpoint
from infra.errors import InvalidRequest
from infra.webhooks import endpoints
from infra.webhooks.destinations import UnsafeDestination


def _endpoint(**kw: object) -> WebhookEndpoint:
    values: dict[str, object] = {
        "id": "ep-1",
        "organization_id": "org-1",
        "url": "https://hooks.example.com/in",
        "name": "mine",
        "is_active": True,
        "subscriptions": [{"eventType": "ACTIVITY_UPDATES", "isActive": True}],
        "source": "api",
    }
    values.update(kw)
    return WebhookEndpoint(**values)


def test_subscriptions_are_validated_and_normalized() -> None:
    assert endpoints.check_subscriptions(
        [
            {"eventType": "ACTIVITY_UPDATES"},
            {"eventType": "BALANCE_CONFIRMED_UPDATES", "filtersJson": '{"a":1}', "isActive": False},
        ]
    ) == [
        {"eventType": "ACTIVITY_UPDATES", "isActive": True},
        {"eventType": "BALANCE_CONFIRMED_UPDATES", "filtersJson": '{"a":1}', "isActive": False},
    ]


@pytest.mark.parametrize(
    "items",
    [
        [{"eventType": "EVERYTHING"}],
        [{}],
        [{"eventType": "ACTIVITY_UPDATES", "filtersJson": "{not json"}],
        [{"eventType": "ACTIVITY_UPDATES", "filtersJson": "x" * 5000}],
        [{"eventType": "ACTIVITY_UPDATES"}] * 17,
    ],
)
def test_bad_subscriptions_are_refused(items: list[dict[str, object]]) -> None:
    with pytest.raises(InvalidRequest):
        endpoints.check_subscriptions(items)


@pytest.mark.parametrize("name", ["", "   ", "x" * 257])
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidRequest):
        endpoints.check_name(name)


def test_url_check_uses_the_allow_list() -> None:
    allow = endpoints.allow_list(["127.0.0.1"])
    assert endpoints.check_url("http://127.0.0.1:9/h", allow) == "http://127.0.0.1:9/h"
    with pytest.raises(UnsafeDestination):
        endpoints.check_url("http://127.0.0.1:9/h", endpoints.allow_list([]))


def test_bad_allow_list_entries_are_reported() -> None:
    with pytest.raises(InvalidRequest, match="WALLETD_WEBHOOK_ALLOW"):
        endpoints.allow_list(["not a host"])


def test_subscribed_follows_active_flags_and_event_type() -> None:
    assert endpoints.subscribed(_endpoint(), "ACTIVITY_UPDATES")
    assert not endpoints.subscribed(_endpoint(), "BALANCE_CONFIRMED_UPDATES")
    assert not endpoints.subscribed(_endpoint(is_active=False), "ACTIVITY_UPDATES")
    paused = _endpoint(subscriptions=[{"eventType": "ACTIVITY_UPDATES", "isActive": False}])
    assert not endpoints.subscribed(paused, "ACTIVITY_UPDATES")
    legacy = _endpoint(source=SOURCE_FEATURE, subscriptions=[])
    assert endpoints.subscribed(legacy, "ACTIVITY_UPDATES")


def test_render_is_the_swagger_webhook_endpoint_data() -> None:
    assert endpoints.render_endpoint(_endpoint()) == {
        "endpointId": "ep-1",
        "organizationId": "org-1",
        "url": "https://hooks.example.com/in",
        "name": "mine",
        "isActive": True,
        "subscriptions": [{"eventType": "ACTIVITY_UPDATES", "isActive": True}],
    }
