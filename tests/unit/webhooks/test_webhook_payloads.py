"""ACTIVITY_UPDATES payloads and stable event ids."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from infra.errors import InvalidRequest
from infra.webhooks.payloads import (
    ACTIVITY_UPDATES,
    activity_event_id,
    activity_update_event,
    encode_body,
)

ACTIVITY: dict[str, Any] = {
    "id": "4c7e1c7a-6a7c-4f36-9a2b-2f4f7bb8a001",
    "organizationId": "org-1",
    "status": "ACTIVITY_STATUS_COMPLETED",
    "type": "ACTIVITY_TYPE_CREATE_WALLET",
    "intent": {"createWalletIntent": {"walletName": "ünïcode"}},
    "result": {"createWalletResult": {"walletId": "w-1", "addresses": []}},
    "votes": [],
    "fingerprint": "sha256:00",
    "canApprove": False,
    "canReject": False,
    "createdAt": {"seconds": "1", "nanos": "0"},
    "updatedAt": {"seconds": "2", "nanos": "0"},
}


def test_payload_is_the_full_activity_object_not_wrapped() -> None:
    event = activity_update_event(ACTIVITY, sequence=3)
    assert json.loads(event.body) == ACTIVITY
    assert event.event_type == ACTIVITY_UPDATES == "ACTIVITY_UPDATES"
    assert event.organization_id == "org-1"


def test_body_is_compact_utf8_in_the_given_key_order() -> None:
    body = encode_body({"b": 1, "a": "é"})
    assert body == '{"b":1,"a":"é"}'.encode()


def test_event_id_is_stable_for_the_same_status_change() -> None:
    first = activity_update_event(ACTIVITY, sequence=3).event_id
    again = activity_update_event(dict(ACTIVITY), sequence=3).event_id
    assert first == again == activity_event_id(ACTIVITY["id"], ACTIVITY["status"], 3)
    assert uuid.UUID(first).version == 5


def test_each_status_change_is_a_distinct_event() -> None:
    pending = activity_update_event({**ACTIVITY, "status": "ACTIVITY_STATUS_PENDING"}, sequence=2)
    done = activity_update_event(ACTIVITY, sequence=3)
    assert pending.event_id != done.event_id


def test_entering_the_same_status_again_is_a_distinct_event() -> None:
    assert activity_event_id("a", "S", 2) != activity_event_id("a", "S", 4)


def test_event_ids_differ_between_activities() -> None:
    assert activity_event_id("a", "S", 1) != activity_event_id("b", "S", 1)


@pytest.mark.parametrize("missing", ["id", "organizationId", "status", "type"])
def test_activity_without_identity_fields_is_refused(missing: str) -> None:
    with pytest.raises(InvalidRequest):
        activity_update_event({k: v for k, v in ACTIVITY.items() if k != missing}, sequence=1)
