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

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.activities.spec import ActivitySpec
from infra.clock import new_id, now
from infra.db.activity_rows import APPROVED, ActivityRow, EvaluationRow, VoteRow
from infra.db.models.organizations import Organization, OrganizationFeature, User
from infra.identity.ancestry import organization_chain
from infra.pipeline import engine, lifecycle, mfa, store
from infra.pipeline.conditions import condition_context
from infra.pipeline.gates import OFF_VALUES, gating_feature
from infra.pipeline.votes import (
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
    #: The ``policy_evaluations`` row to store with the effect (``None``: no engine ran).
    evaluation: EvaluationRow | None = None
    #: The votes the decision counted (the ballot, read again if it had to be).
    votes: tuple[VoteRow, ...] = ()


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


#: A claimed activity with its votes and voters (``infra.pipeline.store.Ballot``).
ClaimedActivity = store.Ballot


def claim(session: Session, activity_id: str) -> ClaimedActivity | None:
    """Lock ``activity_id`` for this transaction if it is PENDING, with its ballot
    (``infra.pipeline.store.claim``: one statement on PostgreSQL). A second executor of the
    same (redelivered) message waits for the lock, then finds the activity no longer PENDING
    and gets ``None``."""
    return store.claim(session, activity_id, lifecycle.PENDING)


def ballot_of(session: Session, activity: ActivityRow) -> ClaimedActivity:
    """The ballot of an activity already at hand (read without a lock)."""
    return store.ballot_of(session, activity)


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


def _evaluation(activity: ActivityRow, votes: Sequence[VoteRow],
                decision: engine.PolicyVerdict) -> EvaluationRow:
    """The ``policy_evaluations`` row of ``decision`` (stored with the effect)."""
    moment = now()
    return EvaluationRow(
        id=new_id(),
        organization_id=activity.organization_id,
        activity_id=activity.id,
        vote_id=votes[-1].id if votes else "",
        outcome=decision.outcome.value,
        reason=decision.reason,
        evaluations=[{"policyId": o.policy_id, "outcome": o.outcome.value}
                     for o in decision.policy_outcomes],
        created_at=moment, updated_at=moment,
    )


def _entitled_voter(session: Session, vote: ActivityRow, params: dict[str, Any], user_id: str) -> bool:
    """Whether the user casting ``vote`` may vote on its target by default.

    An unknown fingerprint counts as entitled so that the vote runs and answers the
    documented 404 (``infra.pipeline.votes.find_target``).
    """
    target = store.find(session, vote.organization_id, str(params.get("fingerprint", "")))
    return target is None or may_vote(session, target, user_id)


def decide(session: Session, activity: ActivityRow | ClaimedActivity, spec: ActivitySpec) -> Verdict:
    """Run the policy engine on the activity; the evaluation to store and the votes it counted
    travel with the :class:`Verdict` (written with the effect, ``infra.pipeline.store.transition``).

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
        decision = replace(decision, evaluation=_evaluation(ballot.activity, ballot.votes, verdict))
    return replace(decision, votes=tuple(ballot.votes))


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
    live_votes = [v for v in votes if v.user_id in set(live_ids) and v.selection == APPROVED]
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
        features=(_features(session, {*organization_chain(session, activity.organization_id),
                                      user.organization_id})
                  if gating_feature(activity.type, params) else {}),
        voter_entitled=spec.consensus_vote and _entitled_voter(session, activity, params, user.id),
        # Another user's credentials, contacts or MFA while they have MFA policies.
        root_quorum_only=mfa.needs_target_quorum(session, activity, user.id),
        resource_action=spec.resource_action,
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
