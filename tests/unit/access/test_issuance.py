"""Authorization of profiled sessions and what credentials they issue inherit, on real rows
(SQLite file; no sockets): ``infra.access.guard.authorize`` and ``infra.access.issuance``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from infra.access import issuance
from infra.access.guard import QUERY, Submission, authorize
from infra.activities import registry
from infra.auth.principal import Principal
from infra.clock import new_id
from infra.db.models.access import SessionProfile
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import ApiKey, Organization, User
from infra.db.models.sessions import VerificationToken
from infra.errors import FailedPrecondition, PermissionDenied
from tests.support.sqlite import sqlite_session

NO_EXPORTS = "activity.action != 'EXPORT'"


def submission(activity_type: str, parameters: dict[str, str] | None = None) -> Submission:
    """A submit of ``activity_type`` as its route hands it to ``authorize``."""
    return Submission(activity_type, parameters or {}, registry().resource_action(activity_type))
P256 = "SIGNATURE_SCHEME_TK_API_P256"


@dataclass
class World:
    session: Session
    organization: Organization
    user: User

    def profile(self, scope: str, expiration: int | None = 300) -> SessionProfile:
        row = SessionProfile(id=new_id(), organization_id=self.organization.id,
                             name=f"profile {new_id()}", scope=scope,
                             expiration_seconds=expiration)
        self.session.add(row)
        self.session.flush()
        return row

    def key(self, *, profile: SessionProfile | None = None, lineage: str | None = None,
            user: User | None = None) -> ApiKey:
        user = user or self.user
        row = ApiKey(id=new_id(), organization_id=user.organization_id, user_id=user.id,
                     name="key", public_key=new_id(), curve="API_KEY_CURVE_P256",
                     credential_type="CREDENTIAL_TYPE_LOGIN",
                     session_profile_id=profile.id if profile else None,
                     lineage_root_id=lineage)
        self.session.add(row)
        self.session.flush()
        return row

    def activity(self, type_: str, public_key: str, scheme: str = P256) -> Activity:
        row = Activity(id=new_id(), organization_id=self.organization.id, type=type_,
                       status="ACTIVITY_STATUS_PENDING", fingerprint=new_id(), body="{}",
                       timestamp_ms="0", intent={}, result={}, user_id=self.user.id)
        self.session.add(row)
        self.session.add(Vote(id=new_id(), activity_id=row.id, user_id=self.user.id,
                              selection="VOTE_SELECTION_APPROVED", message="{}",
                              public_key=public_key, signature="00", scheme=scheme))
        self.session.flush()
        return row

    def principal(self, key: ApiKey) -> Principal:
        return Principal(user_id=key.user_id, organization_id=key.organization_id,
                         credential_id=key.id, credential_type=key.credential_type,
                         public_key=key.public_key, scheme=P256, signature="00",
                         session_profile_id=key.session_profile_id)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with sqlite_session(tmp_path / "issuance.db") as session:
        org = Organization(id=new_id(), name="org")
        user = User(id=new_id(), organization_id=org.id, name="user")
        session.add_all([org, user])
        session.flush()
        yield World(session, org, user)


@pytest.mark.parametrize(("scope", "named"), [
    ("activity.type == 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2'", True),
    ('activity.type in ["ACTIVITY_TYPE_CREATE_AUTHENTICATORS"]', True),
    ("activity.action != 'EXPORT'", False),
    ("activity.type == 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V3'", False),
    ("activity.type == 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2X'", False),
    ("ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2 == activity.type", False),  # not a literal
])
def test_a_scope_names_an_activity_only_in_a_literal(scope: str, named: bool) -> None:
    assert issuance.names(scope, "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2") is named


def test_update_user_is_unfollowed_only_with_a_contact() -> None:
    assert issuance.unfollowed("ACTIVITY_TYPE_UPDATE_USER", {"userEmail": "a@example.com"})
    assert issuance.unfollowed("ACTIVITY_TYPE_UPDATE_USER", {"userPhoneNumber": "+15550001"})
    assert not issuance.unfollowed("ACTIVITY_TYPE_UPDATE_USER", {"userName": "renamed"})
    assert issuance.unfollowed("ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {})
    assert not issuance.unfollowed("ACTIVITY_TYPE_CREATE_WALLET", {})


def test_a_query_is_judged_as_a_query_whatever_it_would_claim(world: World) -> None:
    session_key = world.key(profile=world.profile("activity.resource == 'WALLET'"))
    principal = world.principal(session_key)
    authorize(world.session, principal, submission("ACTIVITY_TYPE_CREATE_WALLET", {}))
    with pytest.raises(PermissionDenied, match="outside the scope of session profile"):
        authorize(world.session, principal, QUERY)


def test_unfollowed_activities_need_the_scope_to_name_them(world: World) -> None:
    denied = world.principal(world.key(profile=world.profile(NO_EXPORTS)))
    with pytest.raises(PermissionDenied) as caught:
        authorize(world.session, denied, submission("ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2"))
    assert "may do only when its scope names 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2'" in \
        caught.value.message
    authorize(world.session, denied, submission("ACTIVITY_TYPE_CREATE_WALLET"))
    naming = world.principal(world.key(profile=world.profile(
        "activity.type == 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2'")))
    authorize(world.session, naming, submission("ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2"))
    # An unprofiled credential is not concerned.
    authorize(world.session, world.principal(world.key()),
              submission("ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2"))


def test_a_login_naming_another_profile_is_refused_unless_named(world: World) -> None:
    profile = world.profile(NO_EXPORTS)
    principal = world.principal(world.key(profile=profile))
    other = world.profile("true")
    login = "ACTIVITY_TYPE_STAMP_LOGIN"
    with pytest.raises(PermissionDenied, match="names another session profile"):
        authorize(world.session, principal, submission(login, {"sessionProfileId": other.id}))
    authorize(world.session, principal, submission(login, {"sessionProfileId": profile.id}))
    authorize(world.session, principal, submission(login, {}))


def test_a_grant_inherits_the_issuers_profile_bound_and_lineage(world: World) -> None:
    profile = world.profile(NO_EXPORTS, expiration=300)
    issuer = world.key(profile=profile, lineage="root-key")
    activity = world.activity("ACTIVITY_TYPE_CREATE_API_KEYS_V2", issuer.public_key)
    grant = issuance.grant(world.session, activity, user_id=world.user.id,
                           organization_id=world.organization.id, seconds=None)
    assert (grant.profile_id, grant.seconds, grant.lineage_root_id) == (profile.id, 300, "root-key")
    assert grant.lifetime(31_536_000) == 300
    # Another user's credential gets the profile but not the lineage.
    other = User(id=new_id(), organization_id=world.organization.id, name="other")
    world.session.add(other)
    world.session.flush()
    grant = issuance.grant(world.session, activity, user_id=other.id,
                           organization_id=world.organization.id, seconds=900)
    assert (grant.profile_id, grant.seconds, grant.lineage_root_id) == (profile.id, 300, None)


def test_an_unprofiled_issuer_roots_the_lineage_at_itself(world: World) -> None:
    issuer = world.key()
    activity = world.activity("ACTIVITY_TYPE_STAMP_LOGIN", issuer.public_key)
    grant = issuance.grant(world.session, activity, user_id=world.user.id,
                           organization_id=world.organization.id, seconds=900)
    assert (grant.profile, grant.seconds, grant.lineage_root_id) == (None, 900, issuer.id)


def _spend_token_with(world: World, activity: Activity) -> None:
    """An ``X-Stamp-Attested`` login: its verification token spent by this very body."""
    world.session.add(VerificationToken(
        id=new_id(), organization_id=world.organization.id, otp_id=new_id(),
        verification_type="OTP_TYPE_EMAIL", contact="user@example.com",
        expires_at=datetime.now(UTC) + timedelta(minutes=5),
        login_used_at=datetime.now(UTC), login_fingerprint=activity.fingerprint))
    world.session.flush()


def test_a_passkey_or_attested_stamp_issues_its_own_lineage(world: World) -> None:
    passkey = world.activity("ACTIVITY_TYPE_STAMP_LOGIN", "cose-key", "SIGNATURE_SCHEME_TK_WEBAUTHN")
    attested = world.activity("ACTIVITY_TYPE_STAMP_LOGIN", "token-client-key")
    _spend_token_with(world, attested)
    for activity in (passkey, attested):
        grant = issuance.grant(world.session, activity, user_id=world.user.id,
                               organization_id=world.organization.id, seconds=900)
        assert (grant.profile, grant.seconds, grant.lineage_root_id) == (None, 900, None)


def test_an_issuer_that_vanished_issues_nothing(world: World) -> None:
    activity = world.activity("ACTIVITY_TYPE_CREATE_API_KEYS_V2", "deleted-key")
    with pytest.raises(FailedPrecondition, match="no longer exists"):
        issuance.grant(world.session, activity, user_id=world.user.id,
                       organization_id=world.organization.id, seconds=None)


def test_a_login_whose_stamping_session_vanished_issues_nothing(world: World) -> None:
    """Attacker: a profiled session submits ``stamp_login`` without a profile (it waits, e.g.
    for consensus), then deletes itself so the login looks attested and inherits nothing.
    No token was spent by that body, so it is no one-time proof: nothing is issued."""
    gone = world.key(profile=world.profile(NO_EXPORTS))
    activity = world.activity("ACTIVITY_TYPE_STAMP_LOGIN", gone.public_key)
    world.session.delete(gone)
    world.session.flush()
    with pytest.raises(FailedPrecondition, match="no longer exists"):
        issuance.grant(world.session, activity, user_id=world.user.id,
                       organization_id=world.organization.id, seconds=900)


def test_a_profiled_login_naming_another_profile_needs_its_scope_to_name_it(
        world: World) -> None:
    wide = world.profile("true", expiration=None)
    narrow = world.key(profile=world.profile(NO_EXPORTS))
    activity = world.activity("ACTIVITY_TYPE_STAMP_LOGIN", narrow.public_key)
    with pytest.raises(PermissionDenied, match="names another session profile"):
        issuance.grant(world.session, activity, user_id=world.user.id,
                       organization_id=world.organization.id, seconds=900,
                       named_profile_id=wide.id)
    naming = world.key(profile=world.profile(
        "activity.type == 'ACTIVITY_TYPE_STAMP_LOGIN'", expiration=60))
    activity = world.activity("ACTIVITY_TYPE_STAMP_LOGIN", naming.public_key)
    grant = issuance.grant(world.session, activity, user_id=world.user.id,
                           organization_id=world.organization.id, seconds=900,
                           named_profile_id=wide.id)
    assert (grant.profile_id, grant.seconds) == (wide.id, 900)


def test_a_key_keeps_the_profile_it_holds(world: World) -> None:
    held = world.profile(NO_EXPORTS, expiration=120)
    unprofiled = issuance.Grant(seconds=3600, profile=None, lineage_root_id=None)
    kept = issuance.keeping(world.session, unprofiled, held.id)
    assert (kept.profile_id, kept.seconds) == (held.id, 120)
    assert issuance.keeping(world.session, unprofiled, None) == unprofiled
