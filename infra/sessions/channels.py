"""The operator's mail and SMS channels: what a request may choose, and how often it may send.

Codes and links go out from the operator's address and number, so a tenant must not be able
to make them say something else or go somewhere else:

- **Sender, sender name, reply-to** are operator configuration: the server's
  ``WALLETD_EMAIL_FROM``, or per top-level (parent) organization the auth proxy
  configuration its root quorum sets (``sendFromEmailAddress``, ``sendFromEmailSenderName``,
  ``replyToEmailAddress``), or what the parent organization's own users send. A request
  from a sub-organization's own user may repeat the configured value or leave it out;
  anything else is a 400.
- **Templates** (``emailCustomization.templateId`` / ``templateVariables`` /
  ``magicLinkTemplate``, ``smsCustomization.template``) are the operator's: a request from a
  sub-organization's own user carrying one is a 400. The parent's users (the auth proxy
  forwards its root-quorum configuration) may set them.
- **App name and logo**, from a sub-organization's own user, only within bounds:
  :data:`APP_NAME_MAX` characters of plain text, a logo ``https://`` URL of at most
  :data:`LOGO_URL_MAX` characters.
- **One recipient per code**: a contact is one address or one E.164 number
  (``infra.sessions.params.normalize_contact``).
- **Rate**: at most :data:`PER_CONTACT` codes per contact every :data:`CONTACT_WINDOW_S`
  seconds (all organizations together) and :data:`PER_ORGANIZATION` per sub-organization
  every :data:`ORGANIZATION_WINDOW_S` seconds, counted from the stored codes at the API,
  whatever client sent them; emailed links :data:`PER_CONTACT` per user and kind
  (:func:`check_link_rate`).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta
from email.utils import parseaddr
from typing import Any, Final
from urllib.parse import urlsplit

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from infra import ratelimit
from infra.db.models.auth_proxy import AuthProxyConfig
from infra.db.models.organizations import Organization, User
from infra.db.models.sessions import OtpCode
from infra.errors import InvalidRequest, ResourceExhausted
from infra.identity.ancestry import organization_chain
from infra.settings import Settings

APP_NAME_MAX: Final = 64
LOGO_URL_MAX: Final = 512
PER_CONTACT: Final = 5
CONTACT_WINDOW_S: Final = 180
PER_ORGANIZATION: Final = 30
ORGANIZATION_WINDOW_S: Final = 60
#: Markup, template syntax, control characters and links have no place in an app name.
_MARKUP: Final = re.compile(r"[<>`{}\\\x00-\x1f\x7f]|://")


@functools.cache
def _settings() -> Settings:
    """This process's settings (activity checks receive no services)."""
    return Settings.from_env()


def _operator_sender(session: Session, organization_id: str,
                     settings: Settings) -> tuple[set[str], set[str], set[str]]:
    """Addresses, names and reply-tos the operator configured for ``organization_id``."""
    name, address = parseaddr(settings.email_from)
    addresses, names, reply_tos = {address.lower()} - {""}, {name} - {""}, set()
    chain = organization_chain(session, organization_id)
    if chain:
        config = session.scalar(select(AuthProxyConfig.settings).where(
            AuthProxyConfig.organization_id == chain[-1]))
        config = config or {}
        if config.get("sendFromEmailAddress"):
            addresses.add(str(config["sendFromEmailAddress"]).lower())
        if config.get("sendFromEmailSenderName"):
            names.add(str(config["sendFromEmailSenderName"]))
        if config.get("replyToEmailAddress"):
            reply_tos.add(str(config["replyToEmailAddress"]).lower())
    return addresses, names, reply_tos


def _from_sub_organization(session: Session, submitter_id: str | None) -> bool:
    """Whether the submitter is a sub-organization's own user (a tenant)."""
    if not submitter_id:
        return False
    parent = session.execute(select(Organization.parent_id).join(
        User, User.organization_id == Organization.id).where(User.id == submitter_id)).first()
    return parent is not None and parent[0] is not None


def check_app_name(value: str | None, field: str) -> None:
    """Plain text of at most :data:`APP_NAME_MAX` characters."""
    if value and (len(value) > APP_NAME_MAX or _MARKUP.search(value)):
        raise InvalidRequest(f"{field} must be plain text of at most {APP_NAME_MAX} characters "
                             "(no markup, template syntax, links or control characters)",
                             field=field)


def check_logo_url(value: str | None, field: str) -> None:
    """An ``https://`` URL of at most :data:`LOGO_URL_MAX` characters."""
    if not value:
        return
    parts = urlsplit(value) if len(value) <= LOGO_URL_MAX else None
    if (parts is None or parts.scheme != "https" or not parts.hostname
            or re.search(r"[<>\"'`{}\\]", value) or any(c.isspace() for c in value)):
        raise InvalidRequest(f"{field} must be an https:// URL of at most {LOGO_URL_MAX} "
                             "characters", field=field)


def check_channel(session: Session, organization_id: str, submitter_id: str | None,
                  params: Any, *, settings: Settings | None = None) -> None:
    """Refuse what a request may not choose about the message it makes the operator send.

    ``params`` is an ``init_otp`` / ``init_otp_auth`` / ``email_auth`` /
    ``init_user_email_recovery`` parameter model.

    Raises:
        InvalidRequest: a foreign sender, name or reply-to, a template from a
            sub-organization, or an app name / logo out of bounds.
    """
    if not _from_sub_organization(session, submitter_id):
        return  # the parent organization's own users: the operator's configuration
    custom = getattr(params, "email_customization", None)
    sms = getattr(params, "sms_customization", None)
    check_app_name(getattr(params, "app_name", None), "parameters.appName")
    if custom is not None:
        check_app_name(custom.app_name, "parameters.emailCustomization.appName")
        check_logo_url(custom.logo_url, "parameters.emailCustomization.logoUrl")
    addresses, names, reply_tos = _operator_sender(session, organization_id,
                                                   settings or _settings())
    where = ("set the sender on the parent organization's auth proxy configuration "
             "(update_auth_proxy_config, root quorum) or leave the field out")
    send_from = getattr(params, "send_from_email_address", None)
    if send_from and send_from.strip().lower() not in addresses:
        raise InvalidRequest(f"sendFromEmailAddress {send_from!r} is not the operator's sender: "
                             + where, field="parameters.sendFromEmailAddress")
    name = getattr(params, "send_from_email_sender_name", None)
    if name and name not in names:
        raise InvalidRequest("sendFromEmailSenderName is not the operator's sender name: " + where,
                             field="parameters.sendFromEmailSenderName")
    reply_to = getattr(params, "reply_to_email_address", None)
    if reply_to and reply_to.strip().lower() not in reply_tos:
        raise InvalidRequest("replyToEmailAddress is not the operator's reply-to: " + where,
                             field="parameters.replyToEmailAddress")
    chosen = [f"emailCustomization.{n}" for n in ("template_id", "template_variables",
                                                  "magic_link_template")
              if custom is not None and getattr(custom, n, None)]
    if sms is not None and sms.template:
        chosen.append("smsCustomization.template")
    if chosen:
        fields = ", ".join(_camel(c) for c in chosen)
        raise InvalidRequest(f"{fields}: templates are the operator's; a sub-organization "
                             "may set only appName and logoUrl",
                             field="parameters." + _camel(chosen[0]))


def _camel(name: str) -> str:
    head, _, tail = name.partition(".")
    first, *rest = tail.split("_")
    return f"{head}.{first}{''.join(w.title() for w in rest)}"


def check_rate(session: Session, organization_id: str, contact: str, now: datetime) -> None:
    """At most :data:`PER_CONTACT` codes per contact and, in a sub-organization,
    :data:`PER_ORGANIZATION` per sub-organization in their windows.

    Raises:
        ResourceExhausted: over either.
    """
    recent = session.scalar(select(func.count()).select_from(OtpCode).where(
        OtpCode.contact == contact,
        OtpCode.created_at > now - timedelta(seconds=CONTACT_WINDOW_S)))
    if int(recent or 0) >= PER_CONTACT:
        raise ResourceExhausted(f"Too many codes for this contact: at most {PER_CONTACT} every "
                                f"{CONTACT_WINDOW_S // 60} minutes; try again later")
    if session.scalar(select(Organization.parent_id).where(
            Organization.id == organization_id)) is None:
        return  # a top-level organization's codes: the auth proxy's per-address limits
    recent = session.scalar(select(func.count()).select_from(OtpCode).where(
        OtpCode.organization_id == organization_id,
        OtpCode.created_at > now - timedelta(seconds=ORGANIZATION_WINDOW_S)))
    if int(recent or 0) >= PER_ORGANIZATION:
        raise ResourceExhausted(f"Too many codes for this organization: at most "
                                f"{PER_ORGANIZATION} a minute; try again later")



@functools.cache
def _limiter(url: str) -> ratelimit.Limiter:
    """One limiter per store for this process (Redis in production, shared by the workers)."""
    return ratelimit.from_url(url)


def check_link_rate(settings: Settings, user_id: str, kind: str) -> None:
    """Emailed links (``email_auth``, ``init_user_email_recovery``) per user: at most
    :data:`PER_CONTACT` of a kind every :data:`CONTACT_WINDOW_S` seconds, in the shared rate
    limiter (nothing a request can delete resets it).

    Raises:
        ResourceExhausted: over the limit.
    """
    decision = _limiter(settings.effective_rate_limit_url).hit(
        f"links:{kind}:{user_id}", PER_CONTACT, CONTACT_WINDOW_S)
    if not decision.allowed:
        raise ResourceExhausted(f"Too many emails for this contact: at most {PER_CONTACT} every "
                                f"{CONTACT_WINDOW_S // 60} minutes; try again later")
