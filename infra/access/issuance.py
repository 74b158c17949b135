"""What a credential inherits from the credential that stamped the activity issuing it.

A session profile (:mod:`infra.access.session_profiles`) contains a session: its scope
decides every request the session stamps, its ``expirationSeconds`` bounds its life. That
holds only if the session cannot mint a credential outside it. So every credential an
activity issues (a login's session: ``stamp_login``, ``otp_login``, ``oauth_login``,
``create_read_write_session``, the credential bundles; an API key: ``create_api_keys``)
inherits from its *issuer*, the credential whose stamp submitted the activity (the
activity's first vote):

* **its session profile** and the profile's bound on the new credential's lifetime. A login
  naming another profile than the issuer's is refused (403) unless the issuer's scope names
  the login's activity type (:func:`names`); naming the issuer's own profile is fine;
* **its lineage** (``api_keys.lineage_root_id``, read by MFA): when the issuer is an
  API-key-type credential (``X-Stamp``) of the user the new credential is for, the new one
  descends from the issuer's root (``issuer.lineage_root_id or issuer.id``); otherwise it is
  its own root (``None``).

Activities that bind something no profile follows (a passkey, a contact, an OAuth identity,
an OAuth2 client, a user, a sub-organization, an emailed credential: :func:`unfollowed`)
are refused for a profiled session unless its scope names them;
``infra.access.guard.authorize`` decides that before anything is stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.access.session_profiles import Profile, profile_of, visible_profile
from infra.crypto.stamp import CURVE_OF_SCHEME
from infra.db.activity_rows import AnyActivity
from infra.db.models.activities import Vote
from infra.db.models.oauth import OidcTokenUse
from infra.db.models.organizations import ApiKey
from infra.db.models.sessions import VerificationToken
from infra.errors import FailedPrecondition, PermissionDenied

#: Activity types that bind a credential or identity which would not carry the session's
#: profile: a profiled session runs them only when its scope names them (docs/ACCESS.md).
UNFOLLOWED: Final = frozenset({
    "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",      # a passkey stamps without a profile
    "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS",        # an OIDC identity: oauth_login
    "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
    "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",      # an OAuth2 client: oauth2_authenticate
    "ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL",
    "ACTIVITY_TYPE_UPDATE_USER_EMAIL",             # a contact: OTP logins, emailed bundles
    "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
    "ACTIVITY_TYPE_CREATE_USERS_V2",               # users with credentials of their own
    "ACTIVITY_TYPE_CREATE_USERS_V3",
    "ACTIVITY_TYPE_CREATE_USERS_V4",
    "ACTIVITY_TYPE_CREATE_INVITATIONS",
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V4",    # an organization with its own root users
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V5",
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V6",
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
    "ACTIVITY_TYPE_EMAIL_AUTH",                    # a credential sent to a contact
    "ACTIVITY_TYPE_EMAIL_AUTH_V2",
    "ACTIVITY_TYPE_EMAIL_AUTH_V3",
    "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY",
    "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2",
    "ACTIVITY_TYPE_RECOVER_USER",                  # a passkey, from a recovery bundle
})
#: ``update_user`` is unfollowed only when it changes a contact.
_CONTACT_FIELDS: Final = ("userEmail", "userPhoneNumber")
_UPDATE_USER: Final = "ACTIVITY_TYPE_UPDATE_USER"
#: Stamps an ``X-Stamp-Attested`` header may carry (besides MFA approvals): their stamp has
#: an ``X-Stamp`` scheme but no API key behind it.
_ATTESTED_TYPES: Final = frozenset({"ACTIVITY_TYPE_STAMP_LOGIN", "ACTIVITY_TYPE_APPROVE_ACTIVITY"})
_LITERAL: Final = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_VERSION: Final = re.compile(r"_V\d+$")


def unfollowed(activity_type: str, parameters: Mapping[str, Any]) -> bool:
    """Whether the activity binds something a session profile does not follow."""
    if activity_type == _UPDATE_USER:
        return any(parameters.get(name) not in (None, "") for name in _CONTACT_FIELDS)
    return activity_type in UNFOLLOWED


def names(scope: str, activity_type: str) -> bool:
    """Whether ``scope`` names ``activity_type`` in a string literal (exactly, or without its
    ``_V<n>`` suffix): a scope allows an unfollowed activity only by naming it."""
    wanted = {activity_type, _VERSION.sub("", activity_type)}
    return any((single or double) in wanted for single, double in _LITERAL.findall(scope))


@dataclass(frozen=True)
class Issuer:
    """The credential whose stamp submitted an activity.

    Attributes:
        key_id: Its API key id when it is an ``X-Stamp`` credential (``None``: a passkey,
            an attested stamp).
        user_id: Its user.
        profile: The session profile it was issued under.
        lineage_root_id: The root of its lineage (``lineage_root_id or id``), for what it
            issues to its own user.
    """

    key_id: str | None
    user_id: str | None
    profile: Profile | None
    lineage_root_id: str | None


NOBODY: Final = Issuer(None, None, None, None)

_FIRST_VOTE: Final = (select(Vote.public_key, Vote.scheme, Vote.user_id)
                      .order_by(Vote.created_at, Vote.id).limit(1))
_KEY: Final = select(ApiKey.id, ApiKey.session_profile_id, ApiKey.lineage_root_id)


def issuer_of(session: Session, activity: AnyActivity) -> Issuer:
    """The credential that stamped ``activity`` (its submitter's vote).

    Raises:
        FailedPrecondition: an ``X-Stamp`` credential stamped it and no longer exists (what
            it was issued under is unknown: nothing is issued).
        PermissionDenied: its session profile no longer exists.
    """
    vote = session.execute(_FIRST_VOTE.where(Vote.activity_id == activity.id)).first()
    if vote is None or vote.scheme not in CURVE_OF_SCHEME:
        return NOBODY
    key = session.execute(_KEY.where(ApiKey.public_key == vote.public_key,
                                     ApiKey.user_id == vote.user_id)).first()
    if key is None:
        if activity.type in _ATTESTED_TYPES and _attested(session, activity.fingerprint):
            return NOBODY  # an X-Stamp-Attested stamp: a one-time proof, no credential
        raise FailedPrecondition(
            "the credential that submitted this activity no longer exists, so what it may "
            "issue is unknown; submit it again with a current credential")
    profile = None
    if key.session_profile_id:
        profile = profile_of(session, key.session_profile_id)
        if profile is None:
            raise PermissionDenied(
                f"the submitting session's profile {key.session_profile_id} no longer exists")
    return Issuer(key.id, vote.user_id, profile, key.lineage_root_id or key.id)


def _attested(session: Session, fingerprint: str) -> bool:
    """Whether an ``X-Stamp-Attested`` stamp submitted the body of ``fingerprint``: the
    verification or OIDC token it carried was spent by that very body. A deleted ``X-Stamp``
    key leaves no such token, so its activity issues nothing (it fails closed)."""
    if session.scalar(select(VerificationToken.id).where(
            VerificationToken.login_fingerprint == fingerprint).limit(1)) is not None:
        return True
    return session.scalar(select(OidcTokenUse.token_hash).where(
        OidcTokenUse.fingerprint == fingerprint).limit(1)) is not None


@dataclass(frozen=True)
class Grant:
    """What one credential an activity issues carries.

    Attributes:
        seconds: Its lifetime (``None``: it does not expire).
        profile: The session profile it is issued under.
        lineage_root_id: The root of the lineage it descends from (``None``: its own root).
        issuer_key_id: The API key that stamped the activity, if any (a re-login of that
            same key keeps its own lineage).
    """

    seconds: int | None
    profile: Profile | None
    lineage_root_id: str | None
    issuer_key_id: str | None = None

    @property
    def profile_id(self) -> str | None:
        """The profile's id (``None``: no profile)."""
        return self.profile.id if self.profile else None

    def lifetime(self, requested: int) -> int:
        """The lifetime of a credential asked to last ``requested`` seconds."""
        return requested if self.seconds is None else min(requested, self.seconds)

    def expires_at(self, now: datetime) -> datetime | None:
        """When the credential expires (``None``: never)."""
        return None if self.seconds is None else now + timedelta(seconds=self.seconds)


def grant(session: Session, activity: AnyActivity, *, user_id: str, organization_id: str,
          seconds: int | None, named_profile_id: str | None = None) -> Grant:
    """What a credential ``activity`` issues to ``user_id`` (of ``organization_id``) carries.

    ``seconds``: the lifetime asked for (``None``: none); ``named_profile_id``: the profile
    a login names (``sessionProfileId``).

    Raises:
        PermissionDenied: a profiled issuer names another profile and its scope does not
            name the activity type.
        NotFound: the named profile is not visible to ``organization_id``.
        FailedPrecondition: see :func:`issuer_of`.
    """
    issuer = issuer_of(session, activity)
    profile = _profile(session, issuer, activity.type, organization_id, named_profile_id)
    if profile is not None and profile.expiration_seconds is not None:
        bound = profile.expiration_seconds
        seconds = bound if seconds is None else min(seconds, bound)
    lineage = issuer.lineage_root_id if issuer.user_id == user_id else None
    return Grant(seconds, profile, lineage, issuer.key_id)


def _profile(session: Session, issuer: Issuer, activity_type: str, organization_id: str,
             named_profile_id: str | None) -> Profile | None:
    inherited = issuer.profile
    if not named_profile_id or (inherited is not None and named_profile_id == inherited.id):
        return inherited
    if inherited is not None and not names(inherited.scope, activity_type):
        raise PermissionDenied(refusal(inherited, activity_type, "names another session profile"))
    return visible_profile(session, organization_id, named_profile_id)


def keeping(session: Session, grant: Grant, held_profile_id: str | None) -> Grant:
    """``grant`` for a key that already holds ``held_profile_id`` (a re-login of the same
    key): a profile it holds is never dropped, and bounds the lifetime, unless the grant
    gives one.

    Raises:
        PermissionDenied: the profile it holds no longer exists.
    """
    if grant.profile is not None or not held_profile_id:
        return grant
    held = profile_of(session, held_profile_id)
    if held is None:
        raise PermissionDenied(f"the session's profile {held_profile_id} no longer exists")
    seconds = grant.seconds
    if held.expiration_seconds is not None:
        bound = held.expiration_seconds
        seconds = bound if seconds is None else min(seconds, bound)
    return replace(grant, seconds=seconds, profile=held)


def refusal(profile: Profile, activity_type: str, what: str) -> str:
    """The message of a refusal for an activity a profiled session may run only by name."""
    return (f"{activity_type} {what}, which a session under profile {profile.name!r} "
            f"({profile.id}) may do only when its scope names {activity_type!r}: credentials "
            "issued by a profiled session keep its profile and its lifetime bound")
