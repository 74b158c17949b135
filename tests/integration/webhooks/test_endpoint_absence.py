"""The webhook outbox's remembered absence of endpoints never hides an endpoint's own creation.

An organization known to have no endpoint skips the outbox (``infra.webhooks.outbox``). The
absence is forgotten when the database announces an endpoint change, i.e. once the change has
committed; the activity that creates the endpoint changes it in its own transaction, so its
own COMPLETED event must not trust the absence. Here ingress and pools share one process over
real PostgreSQL, as in the embedded default, so the submit's own PENDING change has just
noted the organization absent when the pool settles the creation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from infra.db.models.webhooks import WebhookDelivery
from infra.webhooks.outbox import ENDPOINT_ABSENCE
from tests.support.in_process import Client, running


@pytest.fixture
def client(fresh_pg_url: str, tmp_path: Path) -> Iterator[Client]:
    with running(fresh_pg_url, tmp_path) as deployment:
        yield Client(deployment.services, deployment.root)


def test_the_endpoint_creation_event_is_written_though_the_organization_was_known_absent(
        client: Client) -> None:
    org = client.root["organizationId"]
    client.create_wallet("before any endpoint")
    assert ENDPOINT_ABSENCE.known_absent(org)
    created = client.submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", {
        "url": "https://example.com/hook", "name": "hook",
        "subscriptions": [{"eventType": "ACTIVITY_UPDATES", "isActive": True}]})
    assert created["status"] == "ACTIVITY_STATUS_COMPLETED", created
    with client.services.read_session_factory() as session:
        events = session.scalars(select(WebhookDelivery.event_id)
                                 .where(WebhookDelivery.activity_id == created["id"])).all()
    # Its PENDING change came before the endpoint existed; its COMPLETED one is delivered.
    assert len(events) == 1
