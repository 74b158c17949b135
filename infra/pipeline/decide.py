"""Deciding whether an activity may run (the consensus worker's job).

``decide`` loads what the policy engine needs (policies, root quorum, live votes, approvers
with their tags, the credentials that voted, the condition variables), runs
``infra.pipeline.engine.evaluate`` and stores the evaluation (``get_policy_evaluations``). It
answers with a :class:`Decision` the consensus actor acts on: ``allow`` hands the activity to
its pool, ``consensus_needed`` parks it in CONSENSUS_NEEDED, ``deny`` ends it FAILED with a
``PolicyDenied`` carrying ``reason`` (403, gRPC 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.activities.spec import ActivitySpec
from infra.clock import now
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import Organization, OrganizationFeature, User
from infra.db.models.policies import PolicyEvaluation
from infra.pipeline import engine
from infra.pipeline.conditions import condition_context
from infra.pipeline.gates import OFF_VALUES, gating_feature
from infra.pipeline.votes import (
    activity_votes,
    approver_variables,
    ballots_of,
    credential_variables,
    live_approvals,
    may_vote,
    rejecters,
)
from infra.policies import org_policies
from infra.policy.variables import user_variable

Outcome = Literal["allow", "deny", "consensus_needed"]
UNKNOWN_SUBMITTER = "policy engine denied request implicitly: unknown submitter"


@dataclass(frozen=True)
class Decision:
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


# Built once: every evaluation runs them.
_SUBMITTER: Final = (select(User, Organization)
                     .join(Organization, Organization.id == User.organization_id)
                     .where(User.id == bindparam("user_id")))
_ROOT_USERS: Final = select(User.id).where(User.organization_id == bindparam("organization_id"),
                                           User.is_root.is_(True))


def _submitter(session: Session, user_id: str | None) -> tuple[User, Organization] | None:
    """The submitting user and their organization, in one round trip."""
    if not user_id:
        return None
    row = session.execute(_SUBMITTER, {"user_id": user_id}).first()
    return (row[0], row[1]) if row is not None else None


def _root_quorum(session: Session, organization: Organization) -> engine.RootQuorum:
    roots = session.scalars(_ROOT_USERS, {"organization_id": organization.id}).all()
    return engine.RootQuorum(organization.root_quorum_threshold, frozenset(roots))


def _store(session: Session, activity: Activity, votes: Sequence[Vote], decision: engine.Decision) -> None:
    session.add(
        PolicyEvaluation(
            organization_id=activity.organization_id,
            activity_id=activity.id,
            vote_id=votes[-1].id if votes else "",
            outcome=decision.outcome.value,
            reason=decision.reason,
            evaluations=[
                {"policyId": o.policy_id, "outcome": o.outcome.value} for o in decision.policy_outcomes
            ],
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


def decide(session: Session, activity: Activity, spec: ActivitySpec) -> Decision:
    """Run the policy engine on ``activity`` and record the evaluation."""
    found = _submitter(session, activity.user_id)
    if found is None:
        return Decision("deny", UNKNOWN_SUBMITTER)
    # A parent organization acting for a sub-organization is governed by its own policies.
    user, organization = found
    if user.organization_id != activity.organization_id and not spec.parent_may_submit:
        return Decision("deny", engine.IMPLICIT_DENY_MESSAGE)
    moment = now()
    votes = activity_votes(session, activity.id)
    ballots = ballots_of(votes)
    live = live_approvals(ballots, moment)
    live_ids = [b.user_id for b in live]
    live_votes = [v for v in votes if v.user_id in set(live_ids) and v.selection == "VOTE_SELECTION_APPROVED"]
    params: dict[str, Any] = next(iter(activity.intent.values()), {}) if activity.intent else {}
    quorum = _root_quorum(session, organization)
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
        features=(_features(session, {activity.organization_id, organization.id})
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
                    for p in org_policies(session, organization.id)]
        verdict = engine.evaluate(policies, proposal, quorum)
    _store(session, activity, votes, verdict)
    details = {"outcome": verdict.outcome.value, "reason": verdict.reason}
    if verdict.allowed:
        return Decision("allow", details=details)
    if verdict.needs_consensus:
        return Decision("consensus_needed", verdict.reason, details)
    return Decision("deny", verdict.message, details)
