"""Error bodies on the wire (PROTOCOL.md §3.4, §3.7)."""

from __future__ import annotations

from infra.errors import NotFound, PermissionDenied, PolicyDenied, from_failure


def test_a_policy_denial_has_no_details() -> None:
    body = PolicyDenied("policy engine denied request explicitly").to_wire()
    assert body == {"code": 7, "message": "policy engine denied request explicitly", "details": []}


def test_a_stored_denial_is_answered_unchanged() -> None:
    stored = PolicyDenied("policy engine denied request implicitly").to_wire()
    rebuilt = from_failure(stored)
    assert isinstance(rebuilt, PermissionDenied)
    assert rebuilt.to_wire() == stored


def test_other_errors_keep_their_turnkey_detail_through_storage() -> None:
    stored = PermissionDenied("no").to_wire()
    assert stored["details"] == [{"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                                  "turnkeyErrorCode": "FORBIDDEN"}]
    assert from_failure(stored).to_wire() == stored
    missing = NotFound("gone").to_wire()
    assert from_failure(missing).to_wire() == missing
