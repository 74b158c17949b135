"""Contact details of users: E.164 phone numbers and email addresses.

``userPhoneNumber`` must be in E.164 form (``+`` then 2 to 15 digits, no leading zero in the
country code, no spaces or punctuation), as the issue and Turnkey's docs require. Email
addresses are checked for syntax only (no DNS look-up) with ``email-validator``.
"""

from __future__ import annotations

import re
from typing import Final

from email_validator import EmailNotValidError, validate_email

from infra.errors import InvalidRequest

_E164: Final = re.compile(r"\+[1-9][0-9]{1,14}")
MAX_EMAIL_LENGTH: Final = 254


def validate_phone_number(value: str, *, field: str = "userPhoneNumber") -> str:
    """Return ``value`` if it is an E.164 phone number.

    Raises:
        InvalidRequest: the value is not ``+`` followed by 2-15 digits starting 1-9.
    """
    if not isinstance(value, str) or not _E164.fullmatch(value):
        raise InvalidRequest(
            f"invalid phone number {value!r}: {field} must be in E.164 format, e.g. +14155550123",
            field=field,
        )
    return value


def validate_email_address(value: str, *, field: str = "userEmail") -> str:
    """Return ``value`` if it is a syntactically valid email address.

    The address is returned as given (not normalised), so what the client stored is what it
    reads back; comparisons should use :func:`email_key`.

    Raises:
        InvalidRequest: the address is not valid, with the reason.
    """
    if not isinstance(value, str) or not value:
        raise InvalidRequest(f"invalid email address: {field} is empty", field=field)
    if len(value) > MAX_EMAIL_LENGTH or value != value.strip():
        raise InvalidRequest(f"invalid email address {value!r}", field=field)
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as ex:
        raise InvalidRequest(f"invalid email address {value!r}: {ex}", field=field) from ex
    return value


def email_key(value: str) -> str:
    """The form in which two addresses are compared (case-insensitive), e.g. for lookups."""
    return value.strip().lower()


def optional_phone_number(value: str | None, *, field: str = "userPhoneNumber") -> str | None:
    """:func:`validate_phone_number` for an optional field (``None`` or ``""`` means absent)."""
    return validate_phone_number(value, field=field) if value else None


def optional_email_address(value: str | None, *, field: str = "userEmail") -> str | None:
    """:func:`validate_email_address` for an optional field (``None`` or ``""`` means absent)."""
    return validate_email_address(value, field=field) if value else None
