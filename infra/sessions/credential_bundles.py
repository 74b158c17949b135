"""Credential bundles: a fresh P-256 key becomes an expiring login credential of a user, and
its private half, sealed to the client's ``targetPublicKey``, is the ``credentialBundle``
(PROTOCOL.md §5.2; ``decryptCredentialBundle`` of ``@turnkey/crypto`` opens it).

``otp_auth`` and ``oauth`` return the bundle in their result; ``email_auth`` and
``init_user_email_recovery`` email it as a link (``email_bundle``), to the user named by an
email address.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.db.models.organizations import User
from infra.sessions.flows import send_link
from infra.sessions.params import (
    EmailCustomizationParams,
    email_customization,
    normalize_contact,
    seconds,
)
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    credential_bundle,
    new_session_key,
    resolve_login_user,
)
from infra.wiremodel import WireModel


@dataclass(frozen=True)
class IssuedBundle:
    """A bundle handed out: the id of the API key it holds, and the bundle itself."""

    api_key_id: str
    bundle: str


def issue_bundle(ctx: Any, *, user_id: str, target_public_key: str, expiration_seconds: int,
                 invalidate_existing: bool, name: str, credential_type: str) -> IssuedBundle:
    """Make a fresh key a login credential of ``user_id`` and seal it to ``target_public_key``."""
    public_key, private_key = new_session_key()
    bundle = credential_bundle(target_public_key, private_key)
    api_key_id = add_login_credential(
        ctx, user_id=user_id, public_key_hex=public_key, expiration_seconds=expiration_seconds,
        invalidate_existing=invalidate_existing, name=name, credential_type=credential_type)
    return IssuedBundle(api_key_id, bundle)


class EmailBundleParams(WireModel):
    """What an emailed bundle's intent carries (``email_auth``, ``init_user_email_recovery``)."""

    email: str
    target_public_key: str
    expiration_seconds: str | None = None
    email_customization: EmailCustomizationParams | None = None
    send_from_email_address: str | None = None
    send_from_email_sender_name: str | None = None
    reply_to_email_address: str | None = None


def check_email_bundle(params: EmailBundleParams, ctx: Any) -> None:
    """The ingress's check: a valid lifetime, target key and customization, a known user."""
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    credential_bundle(params.target_public_key, b"\x01" * 32)
    email_customization(params.email_customization)
    resolve_login_user(ctx.session, ctx.organization_id,
                       email=normalize_contact("OTP_TYPE_EMAIL", params.email))


def email_bundle(params: EmailBundleParams, ctx: Any, *, kind: str, name: str,
                 credential_type: str, invalidate_existing: bool) -> tuple[str, str]:
    """Issue a bundle to the user named by ``params.email`` and email it as a ``kind`` link
    (``email_auth`` or ``recovery``); ``(user id, API key id)``."""
    target = resolve_login_user(ctx.session, ctx.organization_id,
                                email=normalize_contact("OTP_TYPE_EMAIL", params.email))
    user = ctx.session.get(User, target.user_id)
    assert user is not None
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    issued = issue_bundle(ctx, user_id=user.id, target_public_key=params.target_public_key,
                          expiration_seconds=ttl, invalidate_existing=invalidate_existing,
                          name=name, credential_type=credential_type)
    custom = email_customization(params.email_customization,
                                 send_from=params.send_from_email_address,
                                 sender_name=params.send_from_email_sender_name,
                                 reply_to=params.reply_to_email_address)
    send_link(ctx, kind=kind, user=user, email=custom, expiration_seconds=ttl,
              bundle=issued.bundle)
    return user.id, issued.api_key_id
