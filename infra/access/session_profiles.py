"""Session profiles: sessions issued with a limited scope and a bounded lifetime.

A profile is created in an organization and is visible to it and its sub-organizations
(where end users' sessions live); it is immutable. A login naming ``sessionProfileId``
(``stamp_login``, ``otp_login``, ``oauth_login``, ``create_read_write_session``) issues a
session whose lifetime is at most the profile's ``expirationSeconds``, whose credential
remembers the profile (``api_keys.session_profile_id``) and whose JWT carries
``session_profile_id`` and, as ``session_type``, the profile's name (as Turnkey documents).

Every request stamped with such a session evaluates the profile's ``scope`` (policy
language) with ``activity`` (for a submit: as policies see it, of the route's activity type;
for a query, whatever its body carries: ``{type: "QUERY", kind: "QUERY", resource: "QUERY",
action: "READ", params: {}}``), ``credentials`` (the session's own credential) and ``time``.
Anything but ``true`` (``false``, or an expression that cannot be evaluated) refuses the
request with a 403. ``infra.access.guard.authorize`` calls :func:`enforce` once per request,
on the request as the route parsed it; what credentials the session may issue is
:mod:`infra.access.issuance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy.orm import Session

from infra.clock import now as clock_now
from infra.clock import wire_timestamp
from infra.db.announced import AnnouncedCache
from infra.db.models.access import SessionProfile
from infra.errors import InvalidRequest, NotFound, PermissionDenied
from infra.identity.ancestry import organization_chain
from infra.policy.evaluator import PolicyEvaluationFailed, compiled
from infra.policy.variables import (
    ResourceAction,
    activity_variable,
    credential_variable,
    variables,
)

if TYPE_CHECKING:
    from infra.auth.principal import Principal

#: The type a query is authorized as (:func:`activity_of`), whatever its body carries.
QUERY: Final = "QUERY"
QUERY_ACTIVITY: Final = {"type": "QUERY", "kind": "QUERY", "resource": "QUERY",
                         "action": "READ", "params": {}}
#: The most a profile may allow (a year), as login ``expirationSeconds``.
MAX_EXPIRATION_SECONDS: Final = 31_536_000


@dataclass(frozen=True)
class Profile:
    """What enforcement needs of a profile (immutable: remembered for good)."""

    id: str
    name: str
    scope: str
    expiration_seconds: int | None


#: Profiles by id, remembered per process and forgotten when ``session_profiles`` is
#: announced changed (``infra.db.announced``; attached in bootstrap).
PROFILES: Final[AnnouncedCache[str, Profile]] = AnnouncedCache(
    "session profiles", ("session_profiles",), 100_000)


def _profile(row: SessionProfile) -> Profile:
    return Profile(row.id, row.name, row.scope, row.expiration_seconds)


def visible_profile(session: Session, organization_id: str, profile_id: str) -> Profile:
    """The profile ``profile_id`` if ``organization_id`` or an ancestor created it; a 404."""
    row = session.get(SessionProfile, profile_id)
    if row is None or row.organization_id not in organization_chain(session, organization_id):
        raise NotFound(f"session profile not found: {profile_id}")
    return _profile(row)


def profile_of(session: Session, profile_id: str) -> Profile | None:
    """The profile ``profile_id`` (remembered per process until its table changes)."""
    found = PROFILES.get(profile_id)
    if found is not None:
        return found
    token = PROFILES.token()
    row = session.get(SessionProfile, profile_id)
    if row is None:
        return None
    found = _profile(row)
    PROFILES.put(profile_id, found, token)
    return found


def activity_of(activity_type: str, parameters: Mapping[str, Any],
                resource_action: ResourceAction | None) -> dict[str, Any]:
    """``activity`` as a scope sees a submit of ``activity_type`` (``QUERY``: a query), with
    the ``resource_action`` its spec states."""
    if activity_type == QUERY:
        return dict(QUERY_ACTIVITY)
    return activity_variable(activity_type, parameters, resource_action)


def enforce(session: Session, principal: Principal, activity: dict[str, Any]) -> Profile | None:
    """Refuse (403) a request made with a session whose profile's scope is not ``true`` for
    ``activity`` (:func:`activity_of`); the session's profile (``None``: none)."""
    profile_id = principal.session_profile_id
    if not profile_id:
        return None
    profile = profile_of(session, profile_id)
    if profile is None:
        raise PermissionDenied(f"the session's profile {profile_id} no longer exists")
    env = variables(activity=activity, now=clock_now(), credentials=[
        credential_variable(principal.credential_id, user_id=principal.user_id,
                            credential_type=principal.credential_type,
                            public_key=principal.public_key)])
    try:
        allowed = compiled(profile.scope, "scope")(env)
    except (PolicyEvaluationFailed, InvalidRequest):
        allowed = False
    if allowed is not True:
        raise PermissionDenied(
            f"request outside the scope of session profile {profile.name!r} ({profile.id}): "
            "its scope did not evaluate to true; log in without the profile or with one "
            "whose scope allows it")
    return profile


def check_scope(scope: str) -> None:
    """A 400 when ``scope`` is not a policy-language expression."""
    compiled(scope, "parameters.scope")


def render(row: SessionProfile) -> dict[str, Any]:
    """``v1SessionProfile``."""
    out: dict[str, Any] = {"sessionProfileId": row.id, "sessionProfileName": row.name,
                           "scope": row.scope, "createdAt": wire_timestamp(row.created_at),
                           "updatedAt": wire_timestamp(row.updated_at)}
    if row.expiration_seconds is not None:
        out["expirationSeconds"] = str(row.expiration_seconds)
    if row.notes:
        out["notes"] = row.notes
    return out
