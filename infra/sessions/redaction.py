"""Codes and tokens never rest in the activity tables in the clear.

An activity stores its raw body, its intent and its submitter's vote message (the body). For
the types below, an activity status listener (wired first in ``infra.bootstrap``, so no other
listener, the webhook outbox included, sees them before) rewrites them as the activity is
created: the secret value in the intent is sealed (HPKE) to the service encryption key, and
in the body and vote message it is replaced by ``<redacted>``. The executing worker opens the
sealed value (:func:`reveal`). When the activity settles, the sealed value becomes
``<redacted>`` too. The fingerprint keeps the original body's hash, so an identical re-sent
request still finds its activity.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Final

from sqlalchemy.orm import Session

from infra.crypto.bundles import encrypt_to_bundle, open_encrypted_bundle
from infra.db.changes import Change, Effects
from infra.db.unit_of_work import UnitOfWork
from infra.errors import InvalidCiphertext, InvalidRequest, Unavailable
from infra.pipeline import lifecycle
from infra.sessions.service_keys import ENCRYPTION, ServiceKeys, current_public_key

REDACTED: Final = "<redacted>"
SEALED_PREFIX: Final = "sealed:"
#: Intent fields holding a one-time code or a token, by activity type.
SECRET_FIELDS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    # one-time codes and the verification tokens they buy
    "ACTIVITY_TYPE_OTP_AUTH": ("otpCode",),
    "ACTIVITY_TYPE_VERIFY_OTP": ("otpCode",),
    "ACTIVITY_TYPE_OTP_LOGIN": ("verificationToken",),
    "ACTIVITY_TYPE_OTP_LOGIN_V2": ("verificationToken",),
    # the auth proxy's sign-up spends a verification token (infra.authproxy.signup)
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7": ("verificationToken",),
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8": ("verificationToken",),
    # a verification token proving a user's new contact (infra.sessions.proofs)
    "ACTIVITY_TYPE_UPDATE_USER_EMAIL": ("verificationToken",),
    "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER": ("verificationToken",),
    # OIDC ID tokens, OAuth 2.0 authorization codes and PKCE verifiers
    "ACTIVITY_TYPE_OAUTH_LOGIN": ("oidcToken",),
    "ACTIVITY_TYPE_OAUTH": ("oidcToken",),
    "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE": ("authCode", "codeVerifier"),
})


def _redact_text(text: str, secrets_: list[str]) -> str:
    for value in secrets_:
        text = text.replace(json.dumps(value)[1:-1], REDACTED)
    return text


def seal_on_create(uow: UnitOfWork, change: Change) -> Effects | None:
    """Activity status listener: a new activity rests with its secret fields sealed, and its
    body and the vote stamped over it redacted."""
    activity = change.after
    fields = SECRET_FIELDS.get(activity.type)
    if change.previous is not None or not fields or not activity.intent:
        return None
    ((key, intent),) = activity.intent.items()
    values = [intent[f] for f in fields if isinstance(intent.get(f), str) and intent[f]]
    if not values:
        return None
    public = current_public_key(uow.session, ENCRYPTION)
    if not public:
        raise Unavailable("the service encryption key does not exist yet; retry shortly")
    sealed = {f: SEALED_PREFIX + encrypt_to_bundle(intent[f].encode(), public)
              for f in fields if intent.get(f) in values}
    votes = tuple(replace(v, message=_redact_text(v.message, values)) for v in change.votes or ())
    return Effects(activity=replace(activity, body=_redact_text(activity.body, values),
                                    intent={key: {**intent, **sealed}}),
                   votes=votes)


def redact_on_settle(uow: UnitOfWork, change: Change) -> Effects | None:
    """Activity status listener: a settled activity keeps no sealed secret either."""
    activity = change.after
    fields = SECRET_FIELDS.get(activity.type)
    if not fields or activity.status not in lifecycle.TERMINAL or not activity.intent:
        return None
    ((key, intent),) = activity.intent.items()
    if not any(str(intent.get(f, "")).startswith(SEALED_PREFIX) for f in fields):
        return None
    return Effects(activity=replace(
        activity, intent={key: {**intent, **{f: REDACTED for f in fields if f in intent}}}))


def reveal(value: str, session: Session, keys: ServiceKeys, field: str) -> str:
    """The clear value of a sealed intent field (workers only)."""
    if not value.startswith(SEALED_PREFIX):
        return value
    bundle = value[len(SEALED_PREFIX):]
    for pair in keys.live(session, ENCRYPTION):
        try:
            return open_encrypted_bundle(bundle, pair.private_key).decode("utf-8")
        except InvalidCiphertext:
            continue
    raise InvalidRequest(f"{field} can no longer be read (the encryption key was retired); "
                         "submit the request again", field=field)



