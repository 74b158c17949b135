"""Organization features (``v1FeatureName``) and the value each one accepts.

``set_organization_feature`` stores ``{name, value}`` pairs; this module knows every name in the
swagger enum and validates the value per feature:

* on/off features (email auth, SMS auth, ...): empty, ``"true"`` or ``"false"``;
* ``FEATURE_NAME_WEBAUTHN_ORIGINS``: a JSON list of origins (``["https://app.example"]``), one
  bare origin (the docs' example value ``"https://www.turnkey.com"``) or ``"*"``;
* ``FEATURE_NAME_WEBHOOK``: an absolute ``http(s)`` URL without credentials;
* ``FEATURE_NAME_SWAP_CONFIG`` / ``FEATURE_NAME_EARN_CONFIG``: a JSON object.

Docs (organizations.mdx) give the defaults: email auth and email recovery are on unless the
feature is removed; the WebAuthn origins of a parent organization apply to its
sub-organizations, which otherwise allow every origin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Final
from urllib.parse import urlsplit

from infra.errors import InvalidRequest


class FeatureName(StrEnum):
    """Every ``v1FeatureName`` of the wire contract."""

    ROOT_USER_EMAIL_RECOVERY = "FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY"
    WEBAUTHN_ORIGINS = "FEATURE_NAME_WEBAUTHN_ORIGINS"
    EMAIL_AUTH = "FEATURE_NAME_EMAIL_AUTH"
    EMAIL_RECOVERY = "FEATURE_NAME_EMAIL_RECOVERY"
    WEBHOOK = "FEATURE_NAME_WEBHOOK"
    SMS_AUTH = "FEATURE_NAME_SMS_AUTH"
    OTP_EMAIL_AUTH = "FEATURE_NAME_OTP_EMAIL_AUTH"
    AUTH_PROXY = "FEATURE_NAME_AUTH_PROXY"
    SOLANA_RENT_PREFUND_ENABLED = "FEATURE_NAME_SOLANA_RENT_PREFUND_ENABLED"
    SWAP_CONFIG = "FEATURE_NAME_SWAP_CONFIG"
    EARN_CONFIG = "FEATURE_NAME_EARN_CONFIG"


#: Features that are on when an organization has not removed them (organizations.mdx).
ENABLED_BY_DEFAULT: Final = frozenset({FeatureName.EMAIL_AUTH, FeatureName.EMAIL_RECOVERY})

MAX_VALUE_LENGTH: Final = 16 * 1024
_TRUE: Final = frozenset({"", "true", "1", "enabled"})
_FALSE: Final = frozenset({"false", "0", "disabled"})


def _fail(name: FeatureName, why: str) -> InvalidRequest:
    return InvalidRequest(f"invalid value for {name.value}: {why}", field="value")


def _flag(name: FeatureName, value: str) -> str:
    if value.strip().lower() not in _TRUE | _FALSE:
        raise _fail(name, 'expected "true", "false" or an empty value')
    return value.strip().lower()


def _origin(name: FeatureName, origin: object) -> str:
    if not isinstance(origin, str) or not origin:
        raise _fail(name, "each origin must be a non-empty string")
    if origin == "*" or re.fullmatch(r"android:apk-key-hash:[A-Za-z0-9_\-+/=]+", origin):
        return origin  # every origin, or an Android app's facet
    parts = urlsplit(origin)
    if (
        not parts.scheme
        or not parts.netloc
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or "@" in parts.netloc
    ):
        raise _fail(name, f"{origin!r} is not an origin (scheme://host[:port])")
    if parts.scheme in ("http", "https"):
        try:
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError as ex:
            raise _fail(name, f"{origin!r} has an invalid port") from ex
    return origin.rstrip("/")


def _origins(name: FeatureName, value: str) -> str:
    text = value.strip()
    if not text.startswith("["):
        _origin(name, text)
        return text
    try:
        origins = json.loads(text)
    except ValueError as ex:
        raise _fail(name, "expected a JSON list of origins") from ex
    if not isinstance(origins, list) or not origins:
        raise _fail(name, "expected a non-empty JSON list of origins")
    for origin in origins:
        _origin(name, origin)
    return text


def _webhook(name: FeatureName, value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _fail(name, "expected an absolute http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise _fail(name, "the URL must not carry credentials")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as ex:
        raise _fail(name, "the URL has an invalid port") from ex
    return value.strip()


def _json_object(name: FeatureName, value: str) -> str:
    try:
        parsed = json.loads(value)
    except ValueError as ex:
        raise _fail(name, "expected a JSON object") from ex
    if not isinstance(parsed, dict):
        raise _fail(name, "expected a JSON object")
    return value


_VALIDATORS: Final[Mapping[FeatureName, Callable[[FeatureName, str], str]]] = {
    FeatureName.ROOT_USER_EMAIL_RECOVERY: _flag,
    FeatureName.WEBAUTHN_ORIGINS: _origins,
    FeatureName.EMAIL_AUTH: _flag,
    FeatureName.EMAIL_RECOVERY: _flag,
    FeatureName.WEBHOOK: _webhook,
    FeatureName.SMS_AUTH: _flag,
    FeatureName.OTP_EMAIL_AUTH: _flag,
    FeatureName.AUTH_PROXY: _flag,
    FeatureName.SOLANA_RENT_PREFUND_ENABLED: _flag,
    FeatureName.SWAP_CONFIG: _json_object,
    FeatureName.EARN_CONFIG: _json_object,
}


def feature_name(name: str) -> FeatureName:
    """The :class:`FeatureName` for a wire value.

    Raises:
        InvalidRequest: ``name`` is not in the enum.
    """
    try:
        return FeatureName(name)
    except ValueError as ex:
        raise InvalidRequest(f"unknown feature name {name!r}", field="name") from ex


def validate_feature(name: str, value: str | None) -> tuple[FeatureName, str]:
    """Check a ``set_organization_feature`` pair; return it with the value to store.

    Flags are stored lower-cased; every other value is stored as given (trimmed).

    Raises:
        InvalidRequest: unknown name, or a value the feature does not accept.
    """
    feature = feature_name(name)
    text = "" if value is None else value
    if not isinstance(text, str):
        raise _fail(feature, "the value must be a string")
    if len(text) > MAX_VALUE_LENGTH:
        raise _fail(feature, f"longer than {MAX_VALUE_LENGTH} characters")
    return feature, _VALIDATORS[feature](feature, text)


def webauthn_origins(value: str | None) -> list[str] | None:
    """The allowed origins a stored ``FEATURE_NAME_WEBAUTHN_ORIGINS`` value names.

    ``None`` (feature not set) means every origin is allowed; so does a list containing
    ``"*"``. Values are those :func:`validate_feature` accepted.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    if not text.startswith("["):
        return [text.rstrip("/")]
    parsed = json.loads(text)
    return [str(origin).rstrip("/") for origin in parsed]


def is_enabled(name: FeatureName, features: Mapping[str, str] | Iterable[tuple[str, str]]) -> bool:
    """Whether an on/off feature is on, given an organization's stored ``{name: value}``.

    A feature that is not stored is on only if it is in :data:`ENABLED_BY_DEFAULT`; a stored
    value of ``"false"``/``"0"``/``"disabled"`` turns it off; any other stored value is on.
    """
    stored = dict(features.items() if isinstance(features, Mapping) else features)
    if name.value not in stored:
        return name in ENABLED_BY_DEFAULT
    return stored[name.value].strip().lower() not in _FALSE
