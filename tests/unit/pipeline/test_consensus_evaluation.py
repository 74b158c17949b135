"""``infra.pipeline.decide.decide`` against real rows (SQLite file, no sockets).

Covers what the pure engine tests cannot: votes read from the database, approvals expiring 24
hours after the first, root users and threshold from the organization, approver tags and
credentials, and the stored evaluation that ``get_policy_evaluations`` shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.clock import now
from infra.db.activity_rows import ActivityRow
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import ApiKey, Organization, OrganizationFeature, User
from infra.db.models.policies import Policy, PolicyEvaluation
from infra.pipeline import store
from infra.pipeline.decide import decide
from tests.support.sqlite import sqlite_session

CREATE_POLICY = "ACTIVITY_TYPE_CREATE_POLICY_V3"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with sqlite_session(tmp_path / "decide.db") as s:
        yield s


@pytest.fixture
def org(session: Session) -> Organization:
    organization = Organization(name="org", root_quorum_threshold=1)
    session.add(organization)
    session.flush()
    for user_id, is_root in (("root", True), ("alice", False), ("bob", False)):
        session.add(User(id=user_id, organization_id=organization.id, name=user_id,
                         is_root=is_root))
        session.flush()
        session.add(ApiKey(organization_id=organization.id, user_id=user_id, name="k",
                           public_key=f"02{user_id}", curve="API_KEY_CURVE_P256",
                           credential_type="CREDENTIAL_TYPE_API_KEY_P256"))
    session.flush()
    return organization


def _policy(session: Session, org: Organization, effect: str, condition: str,
            consensus: str = "") -> Policy:
    policy = Policy(organization_id=org.id, name="p", effect=effect, condition=condition,
                    consensus=consensus, notes="")
    session.add(policy)
    session.flush()
    return policy


def _activity(session: Session, org: Organization, submitter: str,
              votes: list[tuple[str, str, timedelta]]) -> Activity:
    activity = Activity(organization_id=org.id, type=CREATE_POLICY, status="ACTIVITY_STATUS_PENDING",
                        fingerprint=f"sha256:{len(votes)}{submitter}", body="{}",
                        timestamp_ms="0", user_id=submitter,
                        intent={"createPolicyIntentV3": {"policyName": "x",
                                                         "effect": "EFFECT_ALLOW"}})
    session.add(activity)
    session.flush()
    for user_id, selection, age in votes:
        session.add(Vote(activity_id=activity.id, user_id=user_id, selection=selection,
                         message="{}", public_key=f"02{user_id}", signature="00",
                         scheme="SIGNATURE_SCHEME_TK_API_P256", created_at=now() - age))
    session.flush()
    return activity


APPROVED = "VOTE_SELECTION_APPROVED"
PAIR = "approvers.any(u, u.id == 'alice') && approvers.any(u, u.id == 'bob')"


def _decide(session: Session, activity: Activity) -> str:
    """The outcome; the evaluation stored as the executor's settle stores it."""
    spec, _ = registry().by_type[activity.type]
    decision = decide(session, ActivityRow.of(activity), spec)
    if decision.evaluation is not None:
        store.store_evaluation(session, decision.evaluation)
    return decision.outcome


def test_two_fresh_approvals_allow_and_the_evaluation_is_stored(
    session: Session, org: Organization
) -> None:
    policy = _policy(session, org, "EFFECT_ALLOW", "activity.resource == 'POLICY'", PAIR)
    activity = _activity(session, org, "alice", [("alice", APPROVED, timedelta(hours=23)),
                                                 ("bob", APPROVED, timedelta(0))])
    assert _decide(session, activity) == "allow"
    stored = session.scalars(select(PolicyEvaluation)).one()
    assert stored.outcome == "OUTCOME_ALLOW"
    assert stored.evaluations == [{"policyId": policy.id, "outcome": "OUTCOME_ALLOW"}]
    last_vote = session.scalars(select(Vote).where(Vote.user_id == "bob")).one()
    assert stored.vote_id == last_vote.id


def test_approvals_expire_24_hours_after_the_first(session: Session, org: Organization) -> None:
    _policy(session, org, "EFFECT_ALLOW", "activity.resource == 'POLICY'", PAIR)
    activity = _activity(session, org, "alice", [("alice", APPROVED, timedelta(hours=25)),
                                                 ("bob", APPROVED, timedelta(0))])
    assert _decide(session, activity) == "consensus_needed"


def test_credentials_variable_comes_from_the_voting_keys(
    session: Session, org: Organization
) -> None:
    _policy(session, org, "EFFECT_ALLOW", "true",
            "credentials.any(c, c.public_key == '02alice' && c.user_id == 'alice' && "
            "c.type == 'CREDENTIAL_TYPE_API_KEY_P256')")
    activity = _activity(session, org, "alice", [("alice", APPROVED, timedelta(0))])
    assert _decide(session, activity) == "allow"


def test_root_threshold_comes_from_the_organization(session: Session, org: Organization) -> None:
    activity = _activity(session, org, "root", [("root", APPROVED, timedelta(0))])
    assert _decide(session, activity) == "allow"
    org.root_quorum_threshold = 2
    session.flush()
    again = _activity(session, org, "root", [("root", APPROVED, timedelta(0)),
                                             ("root", APPROVED, timedelta(0))])
    assert _decide(session, again) == "consensus_needed"


def test_denial_reason_is_the_wire_message(session: Session, org: Organization) -> None:
    _policy(session, org, "EFFECT_DENY", "activity.action == 'CREATE'")
    activity = _activity(session, org, "root", [])
    org.root_quorum_threshold = 2
    decision = decide(session, activity, registry().by_type[CREATE_POLICY][0])
    assert (decision.outcome, decision.reason) == (
        "deny", "policy engine denied request explicitly")


def test_unknown_submitter_is_denied(session: Session, org: Organization) -> None:
    activity = _activity(session, org, "ghost", [])
    assert _decide(session, activity) == "deny"


def test_a_feature_switched_off_closes_its_gate(session: Session, org: Organization) -> None:
    session.add(OrganizationFeature(organization_id=org.id, name="FEATURE_NAME_EMAIL_AUTH",
                                    value="false"))
    activity = _activity(session, org, "root", [("root", APPROVED, timedelta(0))])
    activity.type = "ACTIVITY_TYPE_EMAIL_AUTH_V3"
    activity.intent = {"emailAuthIntentV3": {"email": "a@example.com"}}
    session.flush()
    decision = decide(session, activity, registry().by_type[CREATE_POLICY][0])
    assert decision.outcome == "deny"
    assert "FEATURE_NAME_EMAIL_AUTH is disabled" in decision.reason


def _vote(session: Session, org: Organization, voter: str, target: Activity, kind: str) -> Activity:
    vote = Activity(organization_id=org.id, type=f"ACTIVITY_TYPE_{kind}_ACTIVITY",
                    status="ACTIVITY_STATUS_PENDING", fingerprint=f"sha256:{kind}{voter}",
                    body="{}", timestamp_ms="0", user_id=voter,
                    intent={f"{kind.lower()}ActivityIntent": {"fingerprint": target.fingerprint}})
    session.add(vote)
    session.flush()
    session.add(Vote(activity_id=vote.id, user_id=voter, selection=APPROVED, message="{}",
                     public_key=f"02{voter}", signature="00",
                     scheme="SIGNATURE_SCHEME_TK_API_P256"))
    session.flush()
    return vote


@pytest.mark.parametrize("kind", ["APPROVE", "REJECT"])
def test_only_entitled_users_may_vote_by_default(
    session: Session, org: Organization, kind: str
) -> None:
    session.add(User(id="carol", organization_id=org.id, name="carol"))
    _policy(session, org, "EFFECT_ALLOW", "activity.resource == 'POLICY'",
            "approvers.any(u, u.id == 'bob')")
    target = _activity(session, org, "alice", [("alice", APPROVED, timedelta(0))])
    assert _decide(session, target) == "consensus_needed"  # stores the evaluation
    assert _decide(session, _vote(session, org, "bob", target, kind)) == "allow"  # named
    assert _decide(session, _vote(session, org, "alice", target, kind)) == "allow"  # submitter
    assert _decide(session, _vote(session, org, "root", target, kind)) == "allow"  # root
    refused = decide(session, _vote(session, org, "carol", target, kind),
                     registry().by_type[f"ACTIVITY_TYPE_{kind}_ACTIVITY"][0])
    assert (refused.outcome, refused.reason) == ("deny", "policy engine denied request implicitly")
