"""The request envelope ``{type, timestampMs, organizationId, parameters}``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pydantic import ValidationError

from infra import safejson
from infra.errors import InvalidRequest
from infra.wiremodel import WIRE_CONTEXT, WireModel

M = TypeVar("M", bound=WireModel)

MAX_AGE = timedelta(hours=1)
MAX_SKEW = timedelta(minutes=5)
#: Longest accepted ``timestampMs`` (ignoring leading zeros); year 9999 needs 15 digits.
MAX_TIMESTAMP_DIGITS = 19


@dataclass(frozen=True)
class SubmitBody:
    """A parsed submit body."""

    type: str
    timestamp_ms: str
    organization_id: str
    parameters: dict[str, Any]


def fingerprint(body: bytes) -> str:
    """``sha256:`` + hex SHA-256 of the raw body (PROTOCOL.md §3.3)."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


def parse_json_object(body: bytes) -> dict[str, Any]:
    """Parse a request body that must be a JSON object."""
    try:
        data = safejson.loads(body)
    except safejson.MalformedJson as ex:
        raise InvalidRequest(f"malformed request body: {ex.message}", field=ex.field) from ex
    if not isinstance(data, dict):
        raise InvalidRequest("request body must be a JSON object")
    return data


def organization_id_of(data: dict[str, Any]) -> str:
    """The ``organizationId`` of a body, required and a string."""
    org = data.get("organizationId")
    if not isinstance(org, str) or not org:
        raise InvalidRequest("organizationId is required", field="organizationId")
    return org


def parse_envelope(data: dict[str, Any]) -> SubmitBody:
    """Validate the envelope fields of a submit body."""
    type_ = data.get("type")
    if not isinstance(type_, str) or not type_:
        raise InvalidRequest("type is required", field="type")
    ts = data.get("timestampMs")
    if isinstance(ts, int) and not isinstance(ts, bool):
        ts = str(ts)
    if not isinstance(ts, str) or not ts.isascii() or not ts.isdigit():
        raise InvalidRequest("timestampMs must be a string of milliseconds since the epoch",
                             field="timestampMs")
    # Canonical form (no zero padding): what is stored fits its column on every database.
    ts = ts.lstrip("0") or "0"
    if len(ts) > MAX_TIMESTAMP_DIGITS:
        raise InvalidRequest("timestampMs is out of range: send milliseconds since the epoch",
                             field="timestampMs")
    params = data.get("parameters")
    if not isinstance(params, dict):
        raise InvalidRequest("parameters must be an object (the activity's intent)",
                             field="parameters")
    if not isinstance(data.get("generateAppProofs", False), bool):
        raise InvalidRequest("generateAppProofs must be true or false (or left out)",
                             field="generateAppProofs")
    return SubmitBody(type=type_, timestamp_ms=ts, organization_id=organization_id_of(data),
                    parameters=params)


def check_fresh(timestamp_ms: str, now: datetime) -> None:
    """Refuse timestamps over an hour old or more than five minutes ahead."""
    try:
        ts = datetime.fromtimestamp(int(timestamp_ms) / 1000, tz=now.tzinfo)
    except (OverflowError, ValueError, OSError) as ex:
        raise InvalidRequest("timestampMs is out of range", field="timestampMs") from ex
    if ts < now - MAX_AGE:
        raise InvalidRequest("request timestamp is too old: timestampMs must be less than an hour "
                             "old", field="timestampMs")
    if ts > now + MAX_SKEW:
        raise InvalidRequest("request timestamp is in the future: timestampMs may be at most 5 "
                             "minutes ahead", field="timestampMs")


def validate_model(model: type[M], data: dict[str, Any], where: str) -> M:
    """Convert ``data`` into ``model`` or raise a 400 naming every bad field."""
    try:
        return model.model_validate(data, context=WIRE_CONTEXT)
    except ValidationError as ex:
        raise invalid_request(ex, where) from ex


def invalid_request(ex: ValidationError, where: str) -> InvalidRequest:
    """The 400 for a pydantic error: every violation named under ``where``."""
    violations = []
    for err in ex.errors():
        loc = ".".join(str(p) for p in err["loc"])
        field = f"{where}.{loc}" if loc else where
        violations.append({"field": field, "description": err["msg"]})
    first = violations[0] if violations else {"field": where, "description": str(ex)}
    return InvalidRequest(
        f"invalid {first['field']}: {first['description']}",
        details=[{"@type": "type.googleapis.com/google.rpc.BadRequest",
                  "fieldViolations": violations or [first]}],
    )
