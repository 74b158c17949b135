"""E.164 phone numbers and email addresses (infra.validation.contact)."""

from __future__ import annotations

import pytest

from infra.errors import InvalidRequest
from infra.validation.contact import (
    email_key,
    optional_email_address,
    optional_phone_number,
    validate_email_address,
    validate_phone_number,
)


@pytest.mark.parametrize("number", ["+14155550123", "+447911123456", "+12", "+123456789012345"])
def test_e164_numbers_are_accepted_unchanged(number: str) -> None:
    assert validate_phone_number(number) == number


@pytest.mark.parametrize(
    "number",
    [
        "14155550123",  # no plus
        "+04155550123",  # country code cannot start with 0
        "+1 415 555 0123",
        "+1-415-555-0123",
        "+1234567890123456",  # 16 digits
        "+1",
        "",
        "+1415555012a",
    ],
)
def test_non_e164_numbers_are_rejected_with_the_field_named(number: str) -> None:
    with pytest.raises(InvalidRequest, match=r"E\.164") as info:
        validate_phone_number(number)
    violation = info.value.to_wire()["details"][0]["fieldViolations"][0]
    assert violation["field"] == "userPhoneNumber"


@pytest.mark.parametrize("address", ["alice@example.com", "a.b+tag@sub.example.co.uk"])
def test_valid_email_addresses_are_accepted_unchanged(address: str) -> None:
    assert validate_email_address(address) == address


@pytest.mark.parametrize(
    "address", ["", "alice", "alice@", "@example.com", "a b@example.com", " alice@example.com"]
)
def test_invalid_email_addresses_are_rejected(address: str) -> None:
    with pytest.raises(InvalidRequest, match="invalid email address"):
        validate_email_address(address)


def test_optional_contacts_treat_empty_as_absent() -> None:
    assert optional_email_address(None) is None
    assert optional_email_address("") is None
    assert optional_phone_number(None) is None
    assert optional_phone_number("+4930123456") == "+4930123456"
    with pytest.raises(InvalidRequest):
        optional_phone_number("030123456")


def test_email_key_compares_case_insensitively() -> None:
    assert email_key("Alice@Example.com") == email_key("alice@example.com")
