"""Webhook events and the bytes sent for them (PROTOCOL.md §9 "Payloads").

An ``ACTIVITY_UPDATES`` payload is the full activity object itself, exactly as ``get_activity``
returns it under ``activity`` (top-level ``id, organizationId, status, type, fingerprint,
intent, result, votes, canApprove, canReject, createdAt, updatedAt``), not wrapped.

Each event has an id that is stable across retries and across the organizations it fans out
to: it is a name-based UUID of the activity id, the status the activity entered and the
activity's ``version`` after the change (``infra.pipeline.store.transition`` bumps it on
every status change). Writing the same outbox rows twice (a retried transaction starts from
the same committed version) produces the same event, never a new one; entering a status a
second time (``CONSENSUS_NEEDED`` -> ``PENDING`` -> ``CONSENSUS_NEEDED``) is a new event.
The body is serialized once, when the event is created, and those exact bytes are stored and
signed on every attempt.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infra.errors import InvalidRequest

ACTIVITY_UPDATES = "ACTIVITY_UPDATES"
BALANCE_CONFIRMED_UPDATES = "BALANCE_CONFIRMED_UPDATES"
BALANCE_FINALIZED_UPDATES = "BALANCE_FINALIZED_UPDATES"
SEND_TRANSACTION_STATUS_UPDATES = "SEND_TRANSACTION_STATUS_UPDATES"
EVENT_TYPES = frozenset(
    {
        ACTIVITY_UPDATES,
        BALANCE_CONFIRMED_UPDATES,
        BALANCE_FINALIZED_UPDATES,
        SEND_TRANSACTION_STATUS_UPDATES,
    }
)

#: Namespace of walletd's name-based event ids (fixed forever: changing it changes every id).
EVENT_NAMESPACE = uuid.UUID("6f0b1c4e-7a53-5d2b-9a51-1f1e0c6a9b7d")

_REQUIRED_ACTIVITY_FIELDS = ("id", "organizationId", "status", "type")


@dataclass(frozen=True)
class WebhookEvent:
    """One event, before it fans out to endpoints.

    Attributes:
        event_id: Stable id (``X-Turnkey-Event-Id``).
        event_type: For example ``ACTIVITY_UPDATES``.
        organization_id: The organization the event is about (``X-Turnkey-Organization-Id``).
        body: The exact JSON bytes sent on every attempt.
    """

    event_id: str
    event_type: str
    organization_id: str
    body: bytes


def encode_body(payload: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON with keys in the given order."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def activity_event_id(activity_id: str, status: str, sequence: int) -> str:
    """The stable event id of ``activity_id`` entering ``status`` at version ``sequence``."""
    return str(uuid.uuid5(EVENT_NAMESPACE, f"{ACTIVITY_UPDATES}:{activity_id}:{status}:{sequence}"))


def activity_update_event(activity: Mapping[str, Any], *, sequence: int) -> WebhookEvent:
    """The ``ACTIVITY_UPDATES`` event for an activity as rendered on the wire.

    Args:
        activity: The ``v1Activity`` object (what ``get_activity`` returns under ``activity``).
        sequence: The activity's ``version`` once the change is made (distinguishes two
            entries into the same status).

    Raises:
        InvalidRequest: A required field is missing or empty.
    """
    for name in _REQUIRED_ACTIVITY_FIELDS:
        value = activity.get(name)
        if not isinstance(value, str) or not value:
            raise InvalidRequest(f"activity field {name!r} is required for a webhook")
    return WebhookEvent(
        event_id=activity_event_id(activity["id"], activity["status"], sequence),
        event_type=ACTIVITY_UPDATES,
        organization_id=activity["organizationId"],
        body=encode_body(activity),
    )
