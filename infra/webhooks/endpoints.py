"""Webhook endpoints: validation, wire rendering, and disabling a failing endpoint.

The endpoint activities (``create/update/delete_webhook_endpoint``), the ``list_webhook_endpoints``
query and the notifier share these functions. An endpoint that has failed without a single
success for days is disabled here; the organization sees it as a completed
``ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT`` activity (``isActive: false``) in its activity list,
written by the system, and the endpoint's ``isActive`` turns false.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from infra.clock import new_id
from infra.db.activity_rows import ActivityRow
from infra.db.models.webhooks import SOURCE_FEATURE, WebhookEndpoint
from infra.db.unit_of_work import UnitOfWork
from infra.errors import InvalidRequest
from infra.pipeline import lifecycle, store
from infra.webhooks.destinations import (
    AllowList,
    DestinationUnresolved,
    Resolver,
    UnsafeDestination,
    parse_destination,
    resolve_destination,
    system_resolver,
)
from infra.webhooks.payloads import EVENT_TYPES

MAX_NAME_LENGTH = 256
MAX_SUBSCRIPTIONS = 16
MAX_FILTERS_LENGTH = 4096
UPDATE_TYPE = "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT"


def allow_list(entries: Iterable[str]) -> AllowList:
    """The ``WALLETD_WEBHOOK_ALLOW`` entries (already split by the settings) as an allow list."""
    try:
        return AllowList.of(entries)
    except ValueError as exc:
        raise InvalidRequest(f"WALLETD_WEBHOOK_ALLOW: {exc}") from exc


def check_url(url: str, allow: AllowList, resolver: Resolver = system_resolver) -> str:
    """The normalized URL, or :class:`~infra.webhooks.destinations.UnsafeDestination`.

    Plain http to a host name that is not allow-listed by name is accepted only if it resolves
    into the allow-listed networks now (it is checked again at every send).
    """
    destination = parse_destination(url, allow)
    if destination.scheme == "http" and not allow.allows_host(destination.host):
        try:
            resolve_destination(destination, allow, resolver)
        except DestinationUnresolved as exc:
            raise UnsafeDestination(
                f"plain http is only allowed for allow-listed hosts; {destination.host} "
                "does not resolve, so it cannot be matched to an allow-listed network",
                field="url",
            ) from exc
        except UnsafeDestination as exc:
            raise UnsafeDestination(exc.message, field="url") from exc
    return destination.url


def check_name(name: str) -> str:
    """A non-blank name of bounded length."""
    if not name.strip() or len(name) > MAX_NAME_LENGTH:
        raise InvalidRequest(f"name must be 1 to {MAX_NAME_LENGTH} characters", field="name")
    return name


def check_subscriptions(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate ``[{eventType, filtersJson?, isActive?}]``; returns them in wire form."""
    if len(items) > MAX_SUBSCRIPTIONS:
        raise InvalidRequest(f"at most {MAX_SUBSCRIPTIONS} subscriptions", field="subscriptions")
    out: list[dict[str, Any]] = []
    for item in items:
        event_type = item.get("eventType")
        if event_type not in EVENT_TYPES:
            raise InvalidRequest(
                f"unknown eventType {event_type!r}; use one of {', '.join(sorted(EVENT_TYPES))}",
                field="subscriptions.eventType",
            )
        sub: dict[str, Any] = {"eventType": event_type}
        filters = item.get("filtersJson")
        if filters not in (None, ""):
            if len(str(filters)) > MAX_FILTERS_LENGTH:
                raise InvalidRequest("filtersJson is too long", field="subscriptions.filtersJson")
            try:
                json.loads(str(filters))
            except ValueError as exc:
                raise InvalidRequest("filtersJson must be JSON", field="subscriptions.filtersJson") from exc
            sub["filtersJson"] = str(filters)
        sub["isActive"] = item.get("isActive") is not False
        out.append(sub)
    return out


def subscribed(endpoint: WebhookEndpoint, event_type: str) -> bool:
    """Whether an active endpoint wants ``event_type`` (feature endpoints: activity updates)."""
    if not endpoint.is_active:
        return False
    if endpoint.source == SOURCE_FEATURE:
        return event_type == "ACTIVITY_UPDATES"
    return any(
        s.get("eventType") == event_type and s.get("isActive", True) is not False
        for s in endpoint.subscriptions or []
    )


def render_endpoint(endpoint: WebhookEndpoint) -> dict[str, Any]:
    """``v1WebhookEndpointData``."""
    return {
        "endpointId": endpoint.id,
        "organizationId": endpoint.organization_id,
        "url": endpoint.url,
        "name": endpoint.name,
        "isActive": bool(endpoint.is_active),
        "subscriptions": [dict(s) for s in endpoint.subscriptions or []],
    }


def disable_endpoint(uow: UnitOfWork, endpoint: WebhookEndpoint, reason: str, at: datetime) -> str:
    """Turn a failing endpoint off and record it as a completed activity of its organization.

    Returns:
        The id of the recorded activity.
    """
    endpoint.is_active = False
    endpoint.disabled_at = at
    endpoint.disabled_reason = reason
    endpoint.version += 1
    intent = {"endpointId": endpoint.id, "isActive": False}
    timestamp_ms = str(int(at.timestamp() * 1000))
    body = json.dumps(
        {
            "type": UPDATE_TYPE,
            "organizationId": endpoint.organization_id,
            "timestampMs": timestamp_ms,
            "parameters": intent,
            "issuer": "walletd-notifier",
            "reason": reason,
        },
        separators=(",", ":"),
    )
    activity = ActivityRow(
        id=new_id(),
        organization_id=endpoint.organization_id,
        type=UPDATE_TYPE,
        status=lifecycle.COMPLETED,
        fingerprint="sha256:" + hashlib.sha256(body.encode()).hexdigest(),
        body=body,
        timestamp_ms=timestamp_ms,
        intent={"updateWebhookEndpointIntent": intent},
        result={
            "updateWebhookEndpointResult": {
                "endpointId": endpoint.id,
                "webhookEndpoint": render_endpoint(endpoint),
            }
        },
        failure=None,
        user_id=None,
        version=1,
        created_at=at,
        updated_at=at,
    )
    store.accept(uow, activity)
    return activity.id
