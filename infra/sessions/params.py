"""Parameter models and helpers shared by the login activities."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.organizations import Organization
from infra.errors import InvalidRequest
from infra.identity.ancestry import organization_chain
from infra.identity.credentials import MAX_EXPIRATION_SECONDS
from infra.sessions.delivery import EmailCustomization
from infra.wiremodel import WireModel

OtpType = Literal["OTP_TYPE_EMAIL", "OTP_TYPE_SMS"]


class EmailCustomizationParams(WireModel):
    """``v1EmailCustomizationParams`` / ``V2`` / ``v1EmailAuthCustomizationParams``."""

    app_name: str | None = None
    logo_url: str | None = None
    magic_link_template: str | None = None
    template_variables: str | None = None
    template_id: str | None = None


class SmsCustomizationParams(WireModel):
    """``v1SmsCustomizationParams``."""

    template: str | None = None


def seconds(value: str | None, default: int, field: str = "expirationSeconds",
            maximum: int = MAX_EXPIRATION_SECONDS) -> int:
    """A whole-seconds string parameter, its default, or a 400 saying the range."""
    if value is None or value == "":
        return default
    text = str(value)
    if not text.isascii() or not text.isdigit() or len(text) > 12 or not 1 <= int(text) <= maximum:
        raise InvalidRequest(f"{field} must be a whole number of seconds from 1 to {maximum}",
                             field=field)
    return int(text)


def email_customization(custom: EmailCustomizationParams | None, *, app_name: str | None = None,
                        send_from: str | None = None, sender_name: str | None = None,
                        reply_to: str | None = None) -> EmailCustomization:
    """The delivery's view of an activity's email parameters."""
    variables: dict[str, Any] = {}
    if custom is not None and custom.template_variables:
        try:
            parsed = json.loads(custom.template_variables)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise InvalidRequest("emailCustomization.templateVariables must be a JSON object",
                                 field="emailCustomization.templateVariables")
        variables = {str(k): v for k, v in parsed.items()}
    return EmailCustomization(
        app_name=(app_name or (custom.app_name if custom else None) or ""),
        logo_url=(custom.logo_url if custom else None) or "",
        magic_link_template=(custom.magic_link_template if custom else None) or "",
        template_variables=variables,
        send_from_address=send_from or "",
        send_from_name=sender_name or "",
        reply_to=reply_to or "",
    )


def normalize_contact(otp_type: str, contact: str) -> str:
    """An email lower-cased and trimmed; a phone number in E.164 (``+`` and digits)."""
    text = contact.strip()
    if otp_type == "OTP_TYPE_EMAIL":
        # One recipient: one address, nothing a mail server could read as a list.
        if (text.count("@") != 1 or len(text) > 254 or any(c in text for c in ",;<>\"()[]:")
                or any(c.isspace() or ord(c) < 32 for c in text)):
            raise InvalidRequest("contact must be one email address for OTP_TYPE_EMAIL",
                                 field="contact")
        return text.lower()
    digits = text.replace(" ", "").replace("-", "")
    if not (digits.startswith("+") and digits[1:].isdigit() and 8 <= len(digits) <= 16):
        raise InvalidRequest("contact must be an E.164 phone number (+15551234567) for "
                             "OTP_TYPE_SMS", field="contact")
    return digits


def organizations_below(session: Session, organization_id: str) -> list[str]:
    """``organization_id`` and its direct sub-organizations (where its logins may land)."""
    children = session.scalars(select(Organization.id).where(
        Organization.parent_id == organization_id)).all()
    return [organization_id, *children]


def chain_of(session: Session, organization_id: str) -> list[str]:
    """``organization_id`` and its ancestors."""
    return organization_chain(session, organization_id)


def timestamp_name(prefix: str, now: datetime) -> str:
    """Default credential names: ``<prefix> - <unix seconds>``."""
    return f"{prefix} - {int(now.timestamp())}"
