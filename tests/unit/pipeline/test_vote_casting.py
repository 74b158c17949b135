"""Casting votes (``infra.pipeline.votes.cast_vote``) and vote rights, on real rows (SQLite file)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.activities.spec import ActivityContext
from infra.clock import now
from infra.db.activity_rows import APPROVED, REJECTED, ActivityRow
from infra.db.models.activities import Activity, Vote
from infra.db.models.identity import Tag, UserTagAssignment
from infra.db.models.organizations import Organization, User
from infra.db.models.policies import Policy, PolicyEvaluation
from infra.db.unit_of_work import UnitOfWork
from infra.errors import FailedPrecondition, NotFound
from infra.pipeline import lifecycle
from infra.pipeline.votes import cast_vote, may_vote, vote_rights
from tests.support.sqlite import sqlite_unit_of_work


@dataclass
class FakeBroker:
    sent: list[Any] = field(default_factory=list)

    def enqueue(self, message: Any, delay: int | None = None) -> None:
        self.sent.append(message)


@dataclass
class FakeServices:
    broker: FakeBroker = field(default_factory=FakeBroker)


@pytest.fixture
def uow(tmp_path: Path) -> Iterator[UnitOfWork]:
    with sqlite_unit_of_work(tmp_path / "votes.db") as unit:
        s = unit.session
        org = Organization(id="org", name="org", root_quorum_threshold=1)
        s.add(org)
        s.flush()
        s.add_all([User(id=u, organization_id="org", name=u) for u in ("alice", "bob", "carol")])
        s.add(User(id="root", organization_id="org", name="root", is_root=True))
        s.add(Organization(id="elsewhere", name="elsewhere", root_quorum_threshold=1))
        s.flush()
        s.add(User(id="stranger", organization_id="elsewhere", name="stranger", is_root=True))
        s.commit()
        yield unit


@pytest.fixture
def session(uow: UnitOfWork) -> Session:
    return uow.session


def _activity(session: Session, fingerprint: str, status: str, user: str,
              type_name: str = "ACTIVITY_TYPE_CREATE_POLICY_V3") -> Activity:
    activity = Activity(organization_id="org", type=type_name, status=status,
                        fingerprint=fingerprint, body=f'{{"fp": "{fingerprint}"}}',
                        timestamp_ms="0", intent={}, user_id=user)
    session.add(activity)
    session.flush()
    session.add(Vote(activity_id=activity.id, user_id=user, selection=APPROVED,
                     message=activity.body, public_key=f"02{user}", signature=f"sig-{user}",
                     scheme="SIGNATURE_SCHEME_TK_API_P256"))
    session.flush()
    return activity


def _status(session: Session, activity: Activity) -> str:
    """The status as stored (the activity store writes it; the ORM object is not told)."""
    session.refresh(activity)
    return activity.status


def _ctx(uow: UnitOfWork, vote_activity: Activity, services: FakeServices) -> ActivityContext:
    _, version = registry().by_type["ACTIVITY_TYPE_APPROVE_ACTIVITY"]
    return ActivityContext(uow=uow, activity=ActivityRow.of(vote_activity), organization_id="org",
                           user_id=vote_activity.user_id, version=version, now=now(),
                           services=services)  # type: ignore[arg-type]


def test_an_approval_records_the_stamp_and_re_evaluates_after_commit(
        uow: UnitOfWork, session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "bob",
                     "ACTIVITY_TYPE_APPROVE_ACTIVITY")
    services = FakeServices()
    cast_vote(_ctx(uow, vote, services), "sha256:t", APPROVED)
    assert _status(session, target) == lifecycle.PENDING
    assert services.broker.sent == []  # nothing before commit
    uow.commit()
    assert [m.args for m in services.broker.sent] == [(target.id,)]
    recorded = session.scalars(select(Vote).where(Vote.activity_id == target.id,
                                                  Vote.user_id == "bob")).one()
    assert (recorded.message, recorded.public_key, recorded.signature) == (
        vote.body, "02bob", "sig-bob")


def test_a_rejection_ends_the_target_rejected_without_re_evaluation(
        uow: UnitOfWork, session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "bob",
                     "ACTIVITY_TYPE_REJECT_ACTIVITY")
    services = FakeServices()
    cast_vote(_ctx(uow, vote, services), "sha256:t", REJECTED)
    uow.commit()
    assert _status(session, target) == lifecycle.REJECTED
    assert services.broker.sent == []


def test_a_second_live_approval_by_the_same_user_is_refused(uow: UnitOfWork, session: Session) -> None:
    _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "alice",
                     "ACTIVITY_TYPE_APPROVE_ACTIVITY")
    with pytest.raises(FailedPrecondition, match="already voted"):
        cast_vote(_ctx(uow, vote, FakeServices()), "sha256:t", APPROVED)


def test_an_expired_approval_may_be_given_again(uow: UnitOfWork, session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    first = session.scalars(select(Vote).where(Vote.activity_id == target.id)).one()
    first.created_at = now() - timedelta(hours=25)
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "alice",
                     "ACTIVITY_TYPE_APPROVE_ACTIVITY")
    cast_vote(_ctx(uow, vote, FakeServices()), "sha256:t", APPROVED)
    assert _status(session, target) == lifecycle.PENDING


@pytest.mark.parametrize("status", [lifecycle.COMPLETED, lifecycle.FAILED, lifecycle.REJECTED])
def test_settled_targets_take_no_votes(uow: UnitOfWork, session: Session, status: str) -> None:
    _activity(session, "sha256:t", status, "alice")
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "bob",
                     "ACTIVITY_TYPE_APPROVE_ACTIVITY")
    with pytest.raises(FailedPrecondition, match="not awaiting consensus"):
        cast_vote(_ctx(uow, vote, FakeServices()), "sha256:t", APPROVED)


def test_unknown_fingerprint_is_the_documented_404(uow: UnitOfWork, session: Session) -> None:
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "bob",
                     "ACTIVITY_TYPE_APPROVE_ACTIVITY")
    with pytest.raises(NotFound, match="No activity found with fingerprint"):
        cast_vote(_ctx(uow, vote, FakeServices()), "sha256:nope", APPROVED)


def _pending_policy(session: Session, target: Activity, consensus: str,
                    outcome: str = "OUTCOME_REQUIRES_CONSENSUS") -> None:
    """An ALLOW policy and the stored evaluation that left ``target`` waiting on it."""
    policy = Policy(organization_id="org", name="p", effect="EFFECT_ALLOW", condition="true",
                    consensus=consensus, notes="")
    session.add(policy)
    session.flush()
    session.add(PolicyEvaluation(organization_id="org", activity_id=target.id, outcome=outcome,
                                 evaluations=[{"policyId": policy.id, "outcome": outcome}]))
    session.flush()


def _rights(session: Session, target: Activity, viewer: str | None) -> tuple[bool, bool]:
    votes = list(session.scalars(select(Vote).where(Vote.activity_id == target.id)))
    return vote_rights(session, target, viewer, votes)


def test_vote_rights_for_the_caller(session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    assert _rights(session, target, "alice") == (False, True)  # approved; may reject own
    assert _rights(session, target, "root") == (True, True)  # the root quorum counts roots
    assert _rights(session, target, "bob") == (False, False)  # named by nothing
    assert _rights(session, target, "stranger") == (False, False)  # a root elsewhere
    assert _rights(session, target, None) == (False, False)
    target.status = lifecycle.COMPLETED
    assert _rights(session, target, "root") == (False, False)


@pytest.mark.parametrize(("consensus", "admitted", "refused"), [
    # A user the consensus names may vote; one it does not name may not.
    ("approvers.any(u, u.id == 'bob')", "bob", "carol"),
    # A consensus anyone can complete admits anyone of the organization, not an outsider.
    ("approvers.count() >= 2", "carol", "stranger"),
], ids=["named-user", "anyone-can-complete"])
def test_a_pending_consensus_admits_the_users_it_needs(
    session: Session, consensus: str, admitted: str, refused: str
) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    _pending_policy(session, target, consensus)
    assert _rights(session, target, admitted) == (True, True)
    assert _rights(session, target, refused) == (False, False)


def test_members_of_a_tag_a_count_consensus_names_may_vote(session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    session.add(Tag(id="signers", organization_id="org", name="signers", tag_type="TAG_TYPE_USER"))
    session.flush()
    session.add(UserTagAssignment(tag_id="signers", user_id="bob"))
    # Bob alone does not reach three, but the expression names his tag.
    _pending_policy(session, target, "approvers.filter(u, u.tags.contains('signers')).count() >= 3")
    assert may_vote(session, target, "bob")
    assert not may_vote(session, target, "carol")


def test_a_policy_that_did_not_apply_names_nobody(session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    _pending_policy(session, target, "approvers.any(u, u.id == 'bob')", "OUTCOME_DENY_IMPLICIT")
    assert not may_vote(session, target, "bob")


def test_an_approver_may_still_reject(uow: UnitOfWork, session: Session) -> None:
    target = _activity(session, "sha256:t", lifecycle.CONSENSUS_NEEDED, "alice")
    vote = _activity(session, "sha256:v", lifecycle.PENDING, "alice",
                     "ACTIVITY_TYPE_REJECT_ACTIVITY")
    cast_vote(_ctx(uow, vote, FakeServices()), "sha256:t", REJECTED)
    assert _status(session, target) == lifecycle.REJECTED
