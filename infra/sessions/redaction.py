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
from types import MappingProxyType
from typing import Final

from sqlalchemy.orm import Session

from infra.crypto.bundles import encrypt_to_bundle, open_encrypted_bundle
from infra.db.models.activities import Activity, Vote
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
    # OIDC ID tokens, OAuth 2.0 authorization codes and PKCE verifiers
    "ACTIVITY_TYPE_OAUTH_LOGIN": ("oidcToken",),
    "ACTIVITY_TYPE_OAUTH": ("oidcToken",),
    "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE": ("authCode", "codeVerifier"),
})


def _redact_text(text: str, secrets_: list[str]) -> str:
    for value in secrets_:
        text = text.replace(json.dumps(value)[1:-1], REDACTED)
    return text


def seal_on_create(uow: UnitOfWork, activity: Activity, previous: str | None) -> None:
    """Activity status listener: seal and redact the secret fields of a new activity."""
    session = uow.session
    fields = SECRET_FIELDS.get(activity.type)
    if previous is not None or not fields or not activity.intent:
        return
    ((key, intent),) = activity.intent.items()
    values = [intent[f] for f in fields if isinstance(intent.get(f), str) and intent[f]]
    if not values:
        return
    # Redact first: the submitter's vote (stamped over the body) may already be flushed
    # (persistent) rather than new, so look at every vote of the activity this session holds.
    activity.body = _redact_text(activity.body, values)
    for obj in [*session.new, *session.identity_map.values()]:
        if isinstance(obj, Vote) and obj.activity_id == activity.id:
            obj.message = _redact_text(obj.message, values)
    with session.no_autoflush:
        public = current_public_key(session, ENCRYPTION)
    if not public:
        raise Unavailable("the service encryption key does not exist yet; retry shortly")
    sealed = {f: SEALED_PREFIX + encrypt_to_bundle(intent[f].encode(), public)
              for f in fields if intent.get(f) in values}
    activity.intent = {key: {**intent, **sealed}}


def redact_on_settle(uow: UnitOfWork, activity: Activity, previous: str | None) -> None:
    """Activity status listener: a settled activity keeps no sealed secret either."""
    fields = SECRET_FIELDS.get(activity.type)
    if not fields or activity.status not in lifecycle.TERMINAL or not activity.intent:
        return
    ((key, intent),) = activity.intent.items()
    if any(str(intent.get(f, "")).startswith(SEALED_PREFIX) for f in fields):
        activity.intent = {key: {**intent, **{f: REDACTED for f in fields if f in intent}}}


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



