"""Deciding whether an activity may run (the consensus worker's job).

``decide`` loads what the policy engine needs (policies, root quorum, live votes, approvers
with their tags, the credentials that voted, the condition variables), runs
``consensus.engine.evaluate`` and stores the evaluation (``get_policy_evaluations``). It
answers with a :class:`Decision` the consensus actor acts on: ``allow`` hands the activity to
its pool, ``consensus_needed`` parks it in CONSENSUS_NEEDED, ``deny`` ends it FAILED with a
``PolicyDenied`` carrying ``reason`` (403, gRPC 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from consensus import engine
from consensus.context import condition_context
from consensus.gates import OFF_VALUES
from infra.activities.spec import ActivitySpec
from infra.clock import now
from infra.db.models.activities import Activity, Vote
from infra.db.models.identity import Authenticator
from infra.db.models.organizations import ApiKey, Organization, OrganizationFeature, User
from infra.db.models.policies import PolicyEvaluation
from infra.policies import org_policies
from infra.policy.variables import credential_variable, user_variable
from infra.views.users import render_users
from infra.votes import activity_votes, ballots_of, live_approvals, rejecters

Outcome = Literal["allow", "deny", "consensus_needed"]
UNKNOWN_SUBMITTER = "policy engine denied request implicitly: unknown submitter"


@dataclass(frozen=True)
class Decision:
    """The verdict on one activity, with the reason when it is not ``allow``."""

    outcome: Outcome
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _approvers(session: Session, user_ids: Sequence[str]) -> list[dict[str, Any]]:
    users = session.scalars(select(User).where(User.id.in_(user_ids))).all() if user_ids else []
    views = {v["userId"]: v for v in render_users(session, users)}
    by_id = {u.id: u for u in users}
    out = []
    for user_id in user_ids:
        user = by_id.get(user_id)
        if user is None:
            continue
        tags = [str(t) for t in views.get(user_id, {}).get("userTags", [])]
        out.append(user_variable(user.id, tags=tags, email=user.email or "", alias=user.name))
    return out


def _credentials(session: Session, votes: Sequence[Vote]) -> list[dict[str, Any]]:
    out = []
    for vote in votes:
        key = session.scalars(
            select(ApiKey).where(ApiKey.user_id == vote.user_id, ApiKey.public_key == vote.public_key)
        ).first()
        if key is not None:
            out.append(
                credential_variable(
                    key.id,
                    user_id=vote.user_id,
                    credential_type=key.credential_type,
                    public_key=key.public_key,
                )
            )
            continue
        passkey = session.scalars(
            select(Authenticator).where(
                Authenticator.user_id == vote.user_id,
                or_(
                    Authenticator.public_key == vote.public_key,
                    Authenticator.credential_id == vote.public_key,
                ),
            )
        ).first()
        if passkey is not None:
            out.append(
                credential_variable(
                    passkey.id,
                    user_id=vote.user_id,
                    credential_type="CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR",
                    public_key=passkey.public_key,
                    authenticator_credential_id=passkey.credential_id,
                )
            )
    return out


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


def _root_quorum(session: Session, organization: Organization) -> engine.RootQuorum:
    roots = session.scalars(
        select(User.id).where(User.organization_id == organization.id, User.is_root.is_(True))
    ).all()
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


def decide(session: Session, activity: Activity, spec: ActivitySpec) -> Decision:
    """Run the policy engine on ``activity`` and record the evaluation."""
    user = session.get(User, activity.user_id) if activity.user_id else None
    if user is None:
        return Decision("deny", UNKNOWN_SUBMITTER)
    if user.organization_id != activity.organization_id and not spec.parent_may_submit:
        return Decision("deny", engine.IMPLICIT_DENY_MESSAGE)
    # A parent organization acting for a sub-organization is governed by its own policies.
    organization = session.get(Organization, user.organization_id)
    assert organization is not None
    moment = now()
    votes = activity_votes(session, activity.id)
    ballots = ballots_of(votes)
    live = live_approvals(ballots, moment)
    live_ids = [b.user_id for b in live]
    live_votes = [v for v in votes if v.user_id in set(live_ids) and v.selection == "VOTE_SELECTION_APPROVED"]
    params: dict[str, Any] = next(iter(activity.intent.values()), {}) if activity.intent else {}
    proposal = engine.Proposal(
        activity_type=activity.type,
        parameters=params,
        requester_id=user.id,
        approvers=_approvers(session, live_ids),
        credentials=_credentials(session, live_votes),
        rejecters=rejecters(ballots),
        context=condition_context(session, activity.organization_id, activity.type, params),
        now=moment,
        features=_features(session, {activity.organization_id, organization.id}),
    )
    verdict = engine.evaluate(
        [
            engine.Policy(p.id, p.effect, p.condition, p.consensus, p.time_expression)
            for p in org_policies(session, organization.id)
        ],
        proposal,
        _root_quorum(session, organization),
    )
    _store(session, activity, votes, verdict)
    details = {"outcome": verdict.outcome.value, "reason": verdict.reason}
    if verdict.allowed:
        return Decision("allow", details=details)
    if verdict.needs_consensus:
        return Decision("consensus_needed", verdict.reason, details)
    return Decision("deny", verdict.message, details)
