"""Deciding whether an activity may run, in the transaction that then executes it.

:func:`claim` locks a PENDING activity for the executing pool and loads, in the same round
trip on PostgreSQL, what every decision needs: its votes, the voters and the root-quorum
threshold of the submitter's organization (a :class:`ClaimedActivity`). :func:`decide` loads what else
the policy engine needs only when policies matter (policies, approvers with their tags, the
credentials that voted, the condition variables, feature gates), runs
``infra.pipeline.engine.evaluate`` and stores the evaluation (``get_policy_evaluations``). It
answers with a :class:`Verdict` the executor acts on in the same transaction: ``allow``
executes the activity, ``consensus_needed`` parks it in CONSENSUS_NEEDED, ``deny`` ends it
FAILED with a ``PolicyDenied`` carrying ``reason`` (403, gRPC 7). No policy change can land
between the decision and the effect: both commit together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from infra.activities.spec import ActivitySpec
from infra.audit import leaves as audit
from infra.clock import now
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import Organization, OrganizationFeature, User
from infra.db.models.policies import PolicyEvaluation
from infra.pipeline import engine, lifecycle
from infra.pipeline.conditions import condition_context
from infra.pipeline.gates import OFF_VALUES, gating_feature
from infra.pipeline.votes import (
    APPROVED,
    approver_variables,
    ballots_of,
    credential_variables,
    live_approvals,
    may_vote,
    rejecters,
)
from infra.policy.variables import user_variable
from infra.stored_policies import org_policies

Outcome = Literal["allow", "deny", "consensus_needed"]
UNKNOWN_SUBMITTER = "policy engine denied request implicitly: unknown submitter"


@dataclass(frozen=True)
class Verdict:
    """The verdict on one activity, with the reason when it is not ``allow``."""

    outcome: Outcome
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _features(session: Session, organization_ids: set[str]) -> dict[str, str]:
    """Features of the organizations concerned; an off value anywhere wins."""
    found: dict[str, str] = {}
    rows = session.scalars(
        select(OrganizationFeature).where(OrganizationFeature.organization_id.in_(sorted(organization_ids)))
    )
    for row in rows:
        if found.get(row.name, "").strip().lower() not in OFF_VALUES:
            found[row.name] = row.value
    return found


@dataclass
class ClaimedActivity:
    """A claimed activity with its votes and voters, as the decision reads them.

    ``voters`` maps user id to the voting user (users deleted since are absent);
    ``thresholds`` maps each voter's organization id to its root-quorum threshold.
    """

    activity: Activity
    votes: list[Vote]
    voters: dict[str, User]
    thresholds: dict[str, int]
    #: Read by the statement that took the lock: votes committed while it waited are not
    #: in it (PostgreSQL rechecks the locked row, not the rows joined to it).
    read_with_lock: bool = False

    @property
    def submitter(self) -> User | None:
        """The submitting user, if they still exist."""
        return self.voters.get(self.activity.user_id or "")


# Built once: every execution runs them. Votes come oldest first (the approval window).
_BALLOT_COLUMNS: Final = (Vote, User, Organization.root_quorum_threshold)


def _ballot_rows(statement: Any) -> Any:
    return (statement
            .outerjoin(User, User.id == Vote.user_id)
            .outerjoin(Organization, Organization.id == User.organization_id)
            .order_by(Vote.created_at, Vote.id))


#: PostgreSQL: lock the PENDING activity and read its ballot in one statement.
_CLAIM_WITH_BALLOT: Final = (
    _ballot_rows(select(Activity, *_BALLOT_COLUMNS)
                 .outerjoin(Vote, Vote.activity_id == Activity.id))
    .where(Activity.id == bindparam("activity_id"), Activity.status == bindparam("expected"))
    .with_for_update(of=Activity)
    .execution_options(populate_existing=True)
)
#: Elsewhere the claim is an UPDATE (SQLite's write lock); then this reads the ballot.
_BALLOT: Final = _ballot_rows(select(*_BALLOT_COLUMNS)
                              .where(Vote.activity_id == bindparam("activity_id")))
#: Takes SQLite's write lock on a PENDING activity without changing what it says.
_TOUCH: Final = (update(Activity)
                 .where(Activity.id == bindparam("activity_id"),
                        Activity.status == bindparam("expected"))
                 .values(updated_at=bindparam("now"))
                 .returning(Activity)
                 .execution_options(synchronize_session=False, populate_existing=True))


def _ballot(activity: Activity, rows: Any) -> ClaimedActivity:
    votes: list[Vote] = []
    voters: dict[str, User] = {}
    thresholds: dict[str, int] = {}
    for vote, user, threshold in rows:
        if vote is None:
            continue
        votes.append(vote)
        if user is not None:
            voters[user.id] = user
            thresholds[user.organization_id] = threshold
    return ClaimedActivity(activity, votes, voters, thresholds)


def claim(session: Session, activity_id: str) -> ClaimedActivity | None:
    """Lock ``activity_id`` for this transaction if it is PENDING, with its ballot.

    A second executor of the same (redelivered) message waits for the lock, then finds the
    activity no longer PENDING and gets ``None``.
    """
    params = {"activity_id": activity_id, "expected": lifecycle.PENDING}
    if session.get_bind().dialect.name == "postgresql":
        rows = session.execute(_CLAIM_WITH_BALLOT, params).all()
        if not rows:
            return None
        ballot = _ballot(rows[0][0], (row[1:] for row in rows))
        ballot.read_with_lock = True
        return ballot
    activity = session.scalars(_TOUCH, {**params, "now": now()}).one_or_none()
    if activity is None:
        return None
    return ballot_of(session, activity)


def ballot_of(session: Session, activity: Activity) -> ClaimedActivity:
    """The ballot of an activity already at hand (read without a lock)."""
    return _ballot(activity, session.execute(_BALLOT, {"activity_id": activity.id}).all())


_SUBMITTER: Final = (select(User, Organization.root_quorum_threshold)
                     .join(Organization, Organization.id == User.organization_id)
                     .where(User.id == bindparam("user_id")))


def _unvoting_submitter(session: Session, ballot: ClaimedActivity) -> User | None:
    """The submitter when they hold no vote on their activity (not the case for activities
    the ingress stored, whose submission is the submitter's first approval)."""
    if not ballot.activity.user_id:
        return None
    row = session.execute(_SUBMITTER, {"user_id": ballot.activity.user_id}).first()
    if row is None:
        return None
    ballot.thresholds.setdefault(row[0].organization_id, row[1])
    return row[0]


def _root_quorum(ballot: ClaimedActivity, organization_id: str) -> engine.RootQuorum:
    """The quorum of ``organization_id`` as far as this ballot can reach it.

    The engine only counts root users among the live approvers, so the organization's root
    users who did not vote never matter: the voters who are its root users stand for them.
    """
    roots = frozenset(u.id for u in ballot.voters.values()
                      if u.is_root and u.organization_id == organization_id)
    return engine.RootQuorum(ballot.thresholds.get(organization_id, 1), roots)


def _store(session: Session, activity: Activity, votes: Sequence[Vote],
           decision: engine.PolicyVerdict) -> None:
    evaluations = [{"policyId": o.policy_id, "outcome": o.outcome.value}
                   for o in decision.policy_outcomes]
    audit.note_decision(session, activity.id, decision.outcome.value, decision.reason,
                        evaluations, (v.user_id for v in votes if v.selection == APPROVED))
    session.add(
        PolicyEvaluation(
            organization_id=activity.organization_id,
            activity_id=activity.id,
            vote_id=votes[-1].id if votes else "",
            outcome=decision.outcome.value,
            reason=decision.reason,
            evaluations=evaluations,
        )
    )


def _entitled_voter(session: Session, vote: Activity, params: dict[str, Any], user_id: str) -> bool:
    """Whether the user casting ``vote`` may vote on its target by default.

    An unknown fingerprint counts as entitled so that the vote runs and answers the
    documented 404 (``infra.pipeline.votes.find_target``).
    """
    target = session.scalars(
        select(Activity).where(
            Activity.organization_id == vote.organization_id,
            Activity.fingerprint == str(params.get("fingerprint", "")),
        )
    ).first()
    return target is None or may_vote(session, target, user_id)


def decide(session: Session, activity: Activity | ClaimedActivity, spec: ActivitySpec) -> Verdict:
    """Run the policy engine on the activity and record the evaluation.

    Takes the :class:`ClaimedActivity` of :func:`claim` (or an activity, whose ballot is then read).
    A ballot read by the locking statement itself is read again before an outcome other
    than ``allow`` stands: a vote that committed while the claim waited for the lock saw
    the activity PENDING and handed nothing on, so this decision is the only one that can
    count it. (Only more approvals can turn a refusal or a wait into ``allow``; a rejection
    changes the status, which the claim does recheck.)
    """
    ballot = activity if isinstance(activity, ClaimedActivity) else ballot_of(session, activity)
    decision, verdict = _judge(session, ballot, spec)
    if decision.outcome != "allow" and ballot.read_with_lock:
        fresh = ballot_of(session, ballot.activity)
        if [v.id for v in fresh.votes] != [v.id for v in ballot.votes]:
            ballot = fresh
            decision, verdict = _judge(session, ballot, spec)
    if verdict is not None:
        _store(session, ballot.activity, ballot.votes, verdict)
    return decision


def _judge(session: Session, ballot: ClaimedActivity,
           spec: ActivitySpec) -> tuple[Verdict, engine.PolicyVerdict | None]:
    """The decision on ``ballot`` and the engine's verdict to record (``None``: none ran)."""
    activity = ballot.activity
    user = ballot.submitter or _unvoting_submitter(session, ballot)
    if user is None:
        return Verdict("deny", UNKNOWN_SUBMITTER), None
    # A parent organization acting for a sub-organization is governed by its own policies.
    if user.organization_id != activity.organization_id and not spec.parent_may_submit:
        return Verdict("deny", engine.IMPLICIT_DENY_MESSAGE), None
    moment = now()
    votes = ballot.votes
    ballots = ballots_of(votes)
    live = live_approvals(ballots, moment)
    live_ids = [b.user_id for b in live]
    live_votes = [v for v in votes if v.user_id in set(live_ids) and v.selection == "VOTE_SELECTION_APPROVED"]
    params: dict[str, Any] = next(iter(activity.intent.values()), {}) if activity.intent else {}
    quorum = _root_quorum(ballot, user.organization_id)
    # Gates, rejections and the root quorum need only ids: decide on those first and load
    # policies, approver details and condition variables only when policies matter.
    proposal = engine.Proposal(
        activity_type=activity.type,
        parameters=params,
        requester_id=user.id,
        approvers=[user_variable(i) for i in live_ids],
        credentials=[],
        rejecters=rejecters(ballots),
        context={},
        now=moment,
        features=(_features(session, {activity.organization_id, user.organization_id})
                  if gating_feature(activity.type, params) else {}),
        voter_entitled=spec.consensus_vote and _entitled_voter(session, activity, params, user.id),
    )
    if engine.decided_before_policies(proposal, quorum):
        verdict = engine.evaluate([], proposal, quorum)
    else:
        proposal = replace(
            proposal,
            approvers=approver_variables(session, live_ids),
            credentials=credential_variables(session, live_votes),
            context=condition_context(session, activity.organization_id, activity.type, params),
        )
        policies = [engine.Policy(p.id, p.effect, p.condition, p.consensus, p.time_expression)
                    for p in org_policies(session, user.organization_id)]
        verdict = engine.evaluate(policies, proposal, quorum)
    details = {"outcome": verdict.outcome.value, "reason": verdict.reason}
    if verdict.allowed:
        return Verdict("allow", details=details), verdict
    if verdict.needs_consensus:
        return Verdict("consensus_needed", verdict.reason, details), verdict
    return Verdict("deny", verdict.message, details), verdict
