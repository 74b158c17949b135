"""Request bodies: no ``null`` for a field, booleans and integers in their own JSON type."""

from __future__ import annotations

import pytest

from infra.errors import InvalidRequest
from infra.submit_body import validate_model
from infra.wiremodel import WireModel


class Inner(WireModel):
    flag: bool | None = None


class Body(WireModel):
    name: str | None = None
    count: int = 1
    inner: Inner | None = None


class Nullable(WireModel):
    NULLABLE = frozenset({"name"})
    name: str | None = None


@pytest.mark.parametrize("data, field", [
    ({"name": None}, "body.name"),
    ({"inner": {"flag": None}}, "body.inner.flag"),
    ({"inner": {"flag": 0}}, "body.inner.flag"),
    ({"inner": {"flag": "true"}}, "body.inner.flag"),
    ({"count": "5"}, "body.count"),
    ({"count": True}, "body.count"),
    ({"count": 1.0}, "body.count"),
])
def test_refused_with_the_field_named(data: dict, field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        validate_model(Body, data, "body")
    violations = caught.value.details[0]["fieldViolations"]
    assert violations[0]["field"] == field


def test_accepted_forms() -> None:
    body = validate_model(Body, {"name": "n", "count": 3, "inner": {"flag": False}}, "body")
    assert (body.name, body.count, body.inner) == ("n", 3, Inner(flag=False))
    assert validate_model(Nullable, {"name": None}, "body").name is None


def test_code_may_still_build_models_with_none() -> None:
    # Only request bodies (validated with the wire context) are strict.
    assert Body(name=None, count=2).wire() == {"count": 2}
