"""The steps the login activities share: send a code, check a code, hand out credentials."""

from __future__ import annotations

from email.utils import parseaddr
from typing import Any

from infra.db.models.organizations import User
from infra.db.models.sessions import OtpCode
from infra.sessions import channels, delivery, email_events, otp
from infra.sessions.delivery import EmailCustomization
from infra.sessions.params import organizations_below
from infra.sessions.redaction import reveal
from infra.worker_services import email_events_of, service_keys


def email_event_sink(ctx: Any, organization_id: str,
                     message: delivery.Email) -> delivery.EmailEventSink:
    """Where :func:`delivery.send_email` reports what the SMTP hop saw (``list_email_events``)."""
    log = email_events_of(ctx.services)
    sender = parseaddr(message.sender)[1]

    def sink(event_type: str, message_id: str, details: dict[str, Any]) -> None:
        log.put(email_events.Event(organization_id=organization_id, message_id=message_id,
                                   event_type=event_type, from_address=sender,
                                   to_address=message.to.lower(), details=details))

    return sink


def send_code(ctx: Any, *, purpose: str, otp_type: str, contact: str, user_id: str | None,
              organization_id: str, length: int, alphanumeric: bool, expiration_seconds: int,
              email: EmailCustomization, sms_template: str | None) -> OtpCode:
    """Store a new code for ``contact`` and deliver it (email or SMS) before completing."""
    keys = service_keys(ctx.services)
    channels.check_rate(ctx.session, organization_id, contact, ctx.now)
    row, code = otp.issue(ctx.session, keys, organization_id=organization_id, purpose=purpose,
                          otp_type=otp_type, contact=contact, user_id=user_id, length=length,
                          alphanumeric=alphanumeric, expiration_seconds=expiration_seconds,
                          now=ctx.now)
    settings = ctx.services.settings
    if otp_type == "OTP_TYPE_EMAIL":
        message = delivery.render_email("otp", contact, email, settings, code=code,
                                        minutes=max(1, expiration_seconds // 60))
        delivery.send_email(settings, message, email_event_sink(ctx, organization_id, message))
    else:
        delivery.send_sms(settings, delivery.render_sms(contact, code, sms_template))
    return row


def check_code(ctx: Any, *, otp_id: str, code: str, purpose: str, field: str) -> OtpCode:
    """Spend an attempt on ``otp_id`` with ``code`` (sealed or clear); the used row."""
    keys = service_keys(ctx.services)
    clear = reveal(code, ctx.session, keys, field)
    return otp.consume(ctx.session, keys, organization_ids=organizations_below(
        ctx.session, ctx.organization_id), otp_id=otp_id, purpose=purpose, code=clear,
        now=ctx.now)


def send_link(ctx: Any, *, kind: str, user: User, email: EmailCustomization, bundle: str,
              expiration_seconds: int) -> None:
    """Email a magic link (email auth) or recovery link carrying ``bundle``."""
    settings = ctx.services.settings
    link = delivery.magic_link(email.magic_link_template, bundle)
    message = delivery.render_email(kind, user.email or "", email, settings, link=link,
                                    minutes=max(1, expiration_seconds // 60))
    delivery.send_email(settings, message,
                        email_event_sink(ctx, user.organization_id, message))
