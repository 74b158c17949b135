"""Names in free-form parameters: required, not blank, at most the column's width."""

from __future__ import annotations

import pytest

from infra.errors import InvalidRequest
from infra.validation.names import MAX_NAME_LENGTH, required_name


def test_a_name_within_the_column_width_is_returned() -> None:
    params = {"providerName": "x" * MAX_NAME_LENGTH}
    assert required_name(params, "providerName", "oauthProviders[0]") == "x" * MAX_NAME_LENGTH


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "providerName is required"),
        ("   ", "providerName is required"),
        (7, "providerName is required"),
        ("x" * (MAX_NAME_LENGTH + 1), f"providerName may be at most {MAX_NAME_LENGTH} characters"),
    ],
)
def test_bad_names_are_400s_naming_the_field(value: object, message: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        required_name({"providerName": value}, "providerName", "oauthProviders[0]")
    wire = raised.value.to_wire()
    assert wire["code"] == 3  # INVALID_ARGUMENT: HTTP 400
    assert wire["message"].startswith(message)
    assert "oauthProviders[0].providerName" in str(wire["details"])
