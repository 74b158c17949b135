"""What the dashboard's webhook page calls: ``list_webhook_deliveries`` and the
``replay_webhook_deliveries`` activity (walletd additions)."""

from __future__ import annotations

from datetime import timedelta

from infra.clock import new_id, now
from infra.db.engine import make_engine, make_session_factory
from infra.db.models.webhooks import SOURCE_API, WebhookDelivery, WebhookEndpoint
from tests.e2e.auth_proxy.conftest import Proxied, completed
from tests.support.deployment import database_url, make_organization
from tests.support.raw_api import RawApi


def failed_delivery(proxied: Proxied, organization_id: str) -> tuple[str, str]:
    """An endpoint with one delivery that failed (set up in the database)."""
    engine = make_engine(database_url(proxied.dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            endpoint = WebhookEndpoint(id=new_id(), organization_id=organization_id,
                                       url="https://hooks.example.invalid/x", name="shop",
                                       is_active=True, subscriptions=[], source=SOURCE_API,
                                       version=1)
            session.add(endpoint)
            session.flush()
            delivery = WebhookDelivery(
                id=new_id(), event_id=new_id(), event_type="ACTIVITY_UPDATES",
                endpoint_id=endpoint.id, organization_id=organization_id,
                subject_organization_id=organization_id, body="{}", status="FAILED", attempts=3,
                next_attempt_at=now() + timedelta(days=1), last_status_code=410,
                last_error="HTTP 410")
            session.add(delivery)
            session.commit()
            return endpoint.id, delivery.id
    finally:
        engine.dispose()


def test_deliveries_are_listed_and_a_failed_one_is_replayed(proxied: Proxied) -> None:
    key = make_organization(proxied.dep, "hooks")
    api = RawApi(proxied.dep, key, key.organization_id)
    endpoint_id, delivery_id = failed_delivery(proxied, key.organization_id)
    listed = api.read("list_webhook_deliveries", {"endpointId": endpoint_id})["deliveries"]
    assert [(d["deliveryId"], d["status"], d["lastStatusCode"]) for d in listed] == [
        (delivery_id, "FAILED", 410)]
    replayed = completed(api, "replay_webhook_deliveries",
                         "ACTIVITY_TYPE_REPLAY_WEBHOOK_DELIVERIES", {"deliveryIds": [delivery_id]})
    assert replayed == {"deliveryIds": [delivery_id]}
    # Another organization cannot list or replay it.
    other = make_organization(proxied.dep, "stranger")
    stranger = RawApi(proxied.dep, other, other.organization_id)
    assert stranger.query("list_webhook_deliveries", {"endpointId": endpoint_id}).status_code == 404
    again = completed(stranger, "replay_webhook_deliveries",
                      "ACTIVITY_TYPE_REPLAY_WEBHOOK_DELIVERIES", {"deliveryIds": [delivery_id]})
    assert again == {"deliveryIds": []}
