"""Delivering one-time codes and links: SMTP, a Twilio-compatible SMS API, or the outbox.

* Email: ``WALLETD_SMTP_URL`` = ``smtp://[user:pass@]host:port`` (``?starttls=true`` to
  upgrade) or ``smtps://…`` (TLS from the start); sender ``WALLETD_EMAIL_FROM`` unless the
  request names one (``sendFromEmailAddress`` / ``sendFromEmailSenderName``), optional
  ``replyToEmailAddress``. A multipart text + HTML message rendered with Jinja2 (autoescaped);
  the code stands alone on its own line of the text part.
* SMS: ``WALLETD_SMS_URL`` (the API's base URL, e.g. ``https://api.twilio.com``) with
  ``WALLETD_SMS_ACCOUNT_SID`` / ``_AUTH_TOKEN`` / ``_FROM``: ``POST
  <base>/2010-04-01/Accounts/<sid>/Messages.json`` (form ``To``, ``From``, ``Body``, basic
  auth). ``smsCustomization.template`` with ``{{.OtpCode}}`` is honoured.
* Neither configured (the embedded default): each message is written to
  ``<data dir>/outbox/<id>.eml`` or ``.json`` and the log says where.

Sending runs in the worker executing the activity, retried with exponential backoff
(tenacity) on transient failures; a send that still fails raises :class:`Unavailable`
naming the transport problem, never the message content.
"""

from __future__ import annotations

import json
import logging
import os
import re
import smtplib
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formataddr, make_msgid, parseaddr
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

import requests
from jinja2 import DictLoader, Environment, select_autoescape
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from infra.errors import InvalidRequest, Unavailable
from infra.settings import Settings

log = logging.getLogger(__name__)

ATTEMPTS: Final = 3
TIMEOUT_S: Final = 10.0
DEFAULT_SENDER_NAME: Final = "Notifications"
DEFAULT_APP_NAME: Final = "walletd"
SMS_PLACEHOLDER: Final = re.compile(r"\{\{\s*\.OtpCode\s*\}\}")
DEFAULT_SMS_TEMPLATE: Final = "Your verification code is {{.OtpCode}}"

_TEXT = """\
{% if kind == "otp" %}Your {{ app_name }} verification code is:

{{ code }}

It expires in {{ minutes }} minutes. If you did not ask for it, ignore this message.
{% elif kind == "recovery" %}Recover your {{ app_name }} account with this link:

{{ link }}

It expires in {{ minutes }} minutes. If you did not ask for it, ignore this message.
{% else %}Log in to {{ app_name }} with this link:

{{ link }}

It expires in {{ minutes }} minutes. If you did not ask for it, ignore this message.
{% endif %}"""

_HTML = """\
<!doctype html>
<html><body style="font-family: sans-serif">
{% if logo_url %}<p><img src="{{ logo_url }}" alt="{{ app_name }}"
 style="max-width:340px;max-height:124px"></p>{% endif %}
{% if kind == "otp" %}<p>Your {{ app_name }} verification code is:</p>
<p style="font-size:24px;font-weight:bold;letter-spacing:4px">{{ code }}</p>
{% else %}<p>{% if kind == "recovery" %}Recover your {{ app_name }} account:
{%- else %}Log in to {{ app_name }}:{% endif %}</p>
<p><a href="{{ link }}">{% if kind == "recovery" %}Recover account{% else %}Log in{% endif %}</a></p>
{% endif %}<p>It expires in {{ minutes }} minutes. If you did not ask for it, ignore this message.</p>
</body></html>"""

_SUBJECTS: Final = {
    "otp": "Your {app} verification code",
    "email_auth": "Log in to {app}",
    "recovery": "Recover your {app} account",
}

_ENV = Environment(loader=DictLoader({"text": _TEXT, "html": _HTML}),
                   autoescape=select_autoescape(default=True, default_for_string=True))
# The text part is plain text: render it without HTML escaping.
_TEXT_ENV = Environment(loader=DictLoader({"text": _TEXT}), autoescape=False)


@dataclass(frozen=True)
class EmailCustomization:
    """``emailCustomization`` and the sender fields of an email activity."""

    app_name: str = ""
    logo_url: str = ""
    magic_link_template: str = ""
    template_variables: dict[str, Any] = field(default_factory=dict)
    send_from_address: str = ""
    send_from_name: str = ""
    reply_to: str = ""


@dataclass(frozen=True)
class Email:
    """A rendered email (``secret_fields`` are never logged)."""

    to: str
    subject: str
    text: str
    html: str
    sender: str
    reply_to: str = ""


@dataclass(frozen=True)
class Sms:
    """A rendered SMS."""

    to: str
    body: str


def magic_link(template: str, bundle: str) -> str:
    """The link of an email-auth / recovery message: ``template`` with ``%s`` = bundle."""
    if not template:
        return bundle
    return template.replace("%s", bundle) if "%s" in template else template + bundle


def render_email(kind: str, to: str, custom: EmailCustomization, settings: Settings, *,
                 code: str = "", link: str = "", minutes: int = 5) -> Email:
    """Render ``kind`` (``otp``, ``email_auth``, ``recovery``) for ``to``."""
    app = custom.app_name or DEFAULT_APP_NAME
    values = {**custom.template_variables, "kind": kind, "app_name": app, "code": code,
              "link": link, "minutes": minutes, "logo_url": custom.logo_url}
    default_name, default_address = parseaddr(settings.email_from)
    address = custom.send_from_address or default_address or "no-reply@localhost"
    name = custom.send_from_name or (DEFAULT_SENDER_NAME if custom.send_from_address
                                     else default_name)
    return Email(to=to, subject=_SUBJECTS[kind].format(app=app),
                 text=_TEXT_ENV.get_template("text").render(values),
                 html=_ENV.get_template("html").render(values),
                 sender=formataddr((name, address)) if name else address,
                 reply_to=custom.reply_to)


def render_sms(to: str, code: str, template: str | None) -> Sms:
    """The SMS body: ``template`` with ``{{.OtpCode}}`` replaced by the code."""
    text = template or DEFAULT_SMS_TEMPLATE
    if not SMS_PLACEHOLDER.search(text):
        raise InvalidRequest("smsCustomization.template must contain {{.OtpCode}}",
                             field="smsCustomization.template")
    return Sms(to=to, body=SMS_PLACEHOLDER.sub(lambda _: code, text))


def check_sms_template(template: str | None) -> None:
    """A 400 for a template without ``{{.OtpCode}}`` (run before anything is stored)."""
    render_sms("", "", template)


def mime_of(email: Email) -> EmailMessage:
    """The multipart/alternative message."""
    msg = EmailMessage()
    msg["From"] = email.sender
    msg["To"] = email.to
    msg["Subject"] = email.subject
    msg["Message-ID"] = make_msgid(domain="walletd")
    if email.reply_to:
        msg["Reply-To"] = email.reply_to
    msg.set_content(email.text)
    msg.add_alternative(email.html, subtype="html")
    return msg


# --- transports --------------------------------------------------------------------------


class TransientDelivery(Exception):
    """A failure worth retrying (connection refused, 4xx SMTP reply, 5xx/429 HTTP)."""


class PermanentDelivery(Exception):
    """A failure retrying cannot fix (authentication refused, recipient rejected, 4xx)."""


def _transfer(client: smtplib.SMTP, msg: EmailMessage) -> str:
    """``send_message`` as smtplib does it; the relay's reply to DATA (``list_email_events``)."""
    replies: list[tuple[int, bytes]] = []
    data = client.data

    def keep_reply(payload: Any) -> tuple[int, bytes]:
        reply = data(payload)
        replies.append(reply)
        return reply

    client.data = keep_reply  # type: ignore[method-assign,assignment]
    client.send_message(msg)
    code, text = replies[-1] if replies else (250, b"")
    return f"{code} {text.decode('utf-8', 'replace')}".strip()


def _smtp_send(url: str, msg: EmailMessage) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise PermanentDelivery("WALLETD_SMTP_URL must be smtp://host:port or smtps://host:port")
    query = parse_qs(parts.query)
    starttls = query.get("starttls", ["false"])[0].lower() in ("1", "true", "yes")
    port = parts.port or (465 if parts.scheme == "smtps" else 25)
    context = ssl.create_default_context()
    try:
        client: smtplib.SMTP
        if parts.scheme == "smtps":
            client = smtplib.SMTP_SSL(parts.hostname, port, timeout=TIMEOUT_S, context=context)
        else:
            client = smtplib.SMTP(parts.hostname, port, timeout=TIMEOUT_S)
        with client:
            if starttls:
                client.starttls(context=context)
            if parts.username:
                client.login(unquote(parts.username), unquote(parts.password or ""))
            return _transfer(client, msg)
    except smtplib.SMTPAuthenticationError as ex:
        raise PermanentDelivery(f"SMTP server refused the login ({ex.smtp_code})") from None
    except smtplib.SMTPRecipientsRefused as ex:
        answers = [f"{code} {text.decode('utf-8', 'replace') if isinstance(text, bytes) else text}"
                   for code, text in ex.recipients.values()]
        raise PermanentDelivery("SMTP server refused the recipient: " + "; ".join(answers)
                                ) from None
    except smtplib.SMTPResponseException as ex:
        error = ex.smtp_error.decode("utf-8", "replace") if isinstance(ex.smtp_error, bytes) \
            else str(ex.smtp_error)
        problem = f"SMTP server answered {ex.smtp_code} {error}".strip()
        if 400 <= ex.smtp_code < 500:
            raise TransientDelivery(problem) from None
        raise PermanentDelivery(problem) from None
    except (smtplib.SMTPException, OSError) as ex:
        raise TransientDelivery(f"SMTP server {parts.hostname}:{port} unreachable "
                                f"({type(ex).__name__})") from None


def _sms_send(settings: Settings, sms: Sms) -> None:
    url = (f"{settings.sms_url.rstrip('/')}/2010-04-01/Accounts/"
           f"{settings.sms_account_sid}/Messages.json")
    try:
        response = requests.post(
            url, data={"To": sms.to, "From": settings.sms_from, "Body": sms.body},
            auth=(settings.sms_account_sid, settings.sms_auth_token), timeout=TIMEOUT_S,
            allow_redirects=False)
    except requests.RequestException as ex:
        raise TransientDelivery(f"SMS API unreachable ({type(ex).__name__})") from None
    if response.status_code == 429 or response.status_code >= 500:
        raise TransientDelivery(f"SMS API answered HTTP {response.status_code}")
    if response.status_code >= 300:
        raise PermanentDelivery(f"SMS API refused the message (HTTP {response.status_code})")


def outbox_dir(settings: Settings) -> Path:
    """Where messages go when no transport is configured."""
    return settings.data_dir / "outbox"


def _write_outbox(settings: Settings, suffix: str, content: bytes) -> Path:
    directory = outbox_dir(settings)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{uuid.uuid4()}{suffix}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    return path


def _with_retries(send: Any, what: str) -> None:
    retrying = Retrying(stop=stop_after_attempt(ATTEMPTS),
                        wait=wait_exponential(multiplier=0.2, max=2.0),
                        retry=retry_if_exception(lambda ex: isinstance(ex, TransientDelivery)),
                        reraise=False)
    try:
        retrying(send)
    except RetryError as ex:
        cause = ex.last_attempt.exception()
        raise Unavailable(f"{what} could not be delivered after {ATTEMPTS} attempts: {cause}; "
                          "retry later") from None
    except PermanentDelivery as ex:
        raise Unavailable(f"{what} could not be delivered: {ex}") from None


#: ``on_event(event_type, message_id, details)``: what the SMTP hop saw (``email_events``).
EmailEventSink = Callable[[str, str, dict[str, Any]], None]


def send_email(settings: Settings, email: Email, on_event: EmailEventSink | None = None) -> None:
    """Deliver ``email`` (SMTP, or the outbox when no SMTP URL is configured).

    ``on_event`` hears ``Send`` once, ``DeliveryDelay`` for each temporary refusal,
    ``Delivery`` with the relay's reply or ``Bounce`` with the permanent refusal.
    """
    msg = mime_of(email)
    message_id = str(msg["Message-ID"])

    def note(event_type: str, **details: Any) -> None:
        if on_event is not None:
            on_event(event_type, message_id, details)

    note("Send")
    if not settings.smtp_url:
        path = _write_outbox(settings, ".eml", bytes(msg))
        log.info("no WALLETD_SMTP_URL: email written to %s", path)
        note("Delivery", deliverySmtpResponse=f"written to the outbox directory {path.parent}")
        return
    started = time.monotonic()
    last_delay: list[str] = []

    def attempt() -> None:
        try:
            reply = _smtp_send(settings.smtp_url, msg)
        except TransientDelivery as ex:
            note("DeliveryDelay", deliveryDelayType="TransientCommunicationFailure",
                 diagnosticCode=str(ex))
            last_delay[:] = [str(ex)]
            raise
        except PermanentDelivery as ex:
            note("Bounce", bounceType="Permanent", bounceSubType="General",
                 diagnosticCode=str(ex))
            raise
        last_delay.clear()
        note("Delivery", deliverySmtpResponse=reply,
             deliveryProcessingTimeMillis=str(int((time.monotonic() - started) * 1000)))

    try:
        _with_retries(attempt, "the email")
    except Unavailable:
        if last_delay:  # retries gave up on temporary refusals: walletd stops trying
            note("Bounce", bounceType="Transient", bounceSubType="General",
                 diagnosticCode=last_delay[0])
        raise


def send_sms(settings: Settings, sms: Sms) -> None:
    """Deliver ``sms`` (the SMS API, or the outbox when no SMS URL is configured)."""
    if not settings.sms_url:
        path = _write_outbox(settings, ".json",
                             json.dumps({"to": sms.to, "body": sms.body}).encode())
        log.info("no WALLETD_SMS_URL: SMS written to %s", path)
        return
    _with_retries(lambda: _sms_send(settings, sms), "the SMS")
