"""Hard denials checked before anything else, whatever the policies or root quorum say.

These are PROTOCOL.md §8.4's "feature gates and hard denials" (organizations.mdx): requests
no policy and no quorum can make acceptable.

* Imports must target the importing user ("all import requests must target your own user").
* Authentication flows an organization switched off: ``FEATURE_NAME_EMAIL_AUTH`` (email auth),
  ``FEATURE_NAME_EMAIL_RECOVERY`` (email recovery), ``FEATURE_NAME_SMS_AUTH`` and
  ``FEATURE_NAME_OTP_EMAIL_AUTH`` (SMS / email OTP). Only an explicit off value
  (``false``, ``0``, ``disabled``) closes a gate: whether a feature is on when absent differs
  per feature and is decided by the activity that implements the flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.policy.variables import activity_kind

IMPORT_KINDS = frozenset(
    {"INIT_IMPORT_WALLET", "IMPORT_WALLET", "INIT_IMPORT_PRIVATE_KEY", "IMPORT_PRIVATE_KEY"}
)
IMPORT_OWN_USER = "all import requests must target your own user"
OFF_VALUES = frozenset({"false", "0", "disabled"})
OTP_KINDS = frozenset({"INIT_OTP_AUTH", "INIT_OTP"})
_FEATURE_OF_KIND = {
    "EMAIL_AUTH": "FEATURE_NAME_EMAIL_AUTH",
    "INIT_USER_EMAIL_RECOVERY": "FEATURE_NAME_EMAIL_RECOVERY",
}
_FEATURE_OF_OTP_TYPE = {
    "OTP_TYPE_SMS": "FEATURE_NAME_SMS_AUTH",
    "OTP_TYPE_EMAIL": "FEATURE_NAME_OTP_EMAIL_AUTH",
}


def gating_feature(activity_type: str, parameters: Mapping[str, Any]) -> str | None:
    """The organization feature that must not be off for this activity, if any."""
    kind = activity_kind(activity_type)
    if kind in OTP_KINDS:
        return _FEATURE_OF_OTP_TYPE.get(str(parameters.get("otpType", "")))
    return _FEATURE_OF_KIND.get(kind)


def hard_denial(
    activity_type: str,
    parameters: Mapping[str, Any],
    requester_id: str,
    features: Mapping[str, str] | None = None,
) -> str | None:
    """The reason the activity is refused outright for ``requester_id``, or ``None``.

    ``features`` maps ``FEATURE_NAME_*`` to the value set on the organization(s) concerned.
    """
    kind = activity_kind(activity_type)
    if kind in IMPORT_KINDS and parameters.get("userId") != requester_id:
        return IMPORT_OWN_USER
    feature = gating_feature(activity_type, parameters)
    if feature and (features or {}).get(feature, "").strip().lower() in OFF_VALUES:
        return f"{feature} is disabled for this organization"
    return None
