"""The policy decision on a re-signed transaction: a replacement is decided like the original.

A replacement changes what was approved (its fees), so before it is signed the policy engine
(``infra.pipeline.engine.evaluate``) judges it with the organization's policies as they are
now, the original activity's submitter and the approvals that counted when it was signed,
and the ``eth.tx`` variables of the *new* transaction (nonce, gas and fees included, built by
``infra.pipeline.conditions.condition_context`` as for the original). Anything other than
``allow`` (a denial, a consensus that would need new votes, an MFA step) stops replacement:
nobody is asked again for a transaction already sent, so it is given up with the reason.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.clock import as_utc, now
from infra.db.models.activities import Activity
from infra.db.models.organizations import Organization, User
from infra.pipeline import engine
from infra.pipeline.conditions import condition_context
from infra.pipeline.votes import (
    APPROVED,
    activity_votes,
    approver_variables,
    ballots_of,
    credential_variables,
    live_approvals,
    rejecters,
)
from infra.stored_policies import org_policies


def replaced_parameters(params: dict[str, Any], unsigned: dict[str, Any]) -> dict[str, Any]:
    """The activity's parameters with what the re-signed transaction fixes (decimal strings,
    as a caller sends them): the policies see the fees and nonce actually signed."""
    return {**params, "nonce": str(unsigned["nonce"]), "gasLimit": str(unsigned["gas"]),
            "maxFeePerGas": str(unsigned["maxFeePerGas"]),
            "maxPriorityFeePerGas": str(unsigned["maxPriorityFeePerGas"])}


def _root_quorum(session: Session, organization_id: str,
                 approver_ids: list[str]) -> engine.RootQuorum:
    threshold = session.scalar(select(Organization.root_quorum_threshold)
                               .where(Organization.id == organization_id))
    roots = frozenset(session.scalars(select(User.id).where(
        User.organization_id == organization_id, User.is_root.is_(True),
        User.id.in_(approver_ids)))) if approver_ids else frozenset()
    return engine.RootQuorum(1 if threshold is None else threshold, roots)


def verdict(session: Session, activity_id: str, unsigned: dict[str, Any],
            signed_at: datetime) -> engine.PolicyVerdict:
    """The policy engine's verdict on signing ``unsigned`` for activity ``activity_id``.

    ``signed_at`` is when the original was signed: the approvals live then are the approvers
    (an approval window that closed since does not take them away).
    """
    activity = session.get(Activity, activity_id)
    if activity is None or not activity.user_id:
        return engine.PolicyVerdict(engine.Outcome.DENY_IMPLICIT,
                                    "the activity that sent the transaction is gone")
    user = session.get(User, activity.user_id)
    if user is None:
        return engine.PolicyVerdict(engine.Outcome.DENY_IMPLICIT,
                                    "the user who sent the transaction no longer exists")
    intent = dict(next(iter(activity.intent.values()), {})) if activity.intent else {}
    params = replaced_parameters(intent, unsigned)
    votes = activity_votes(session, activity.id)
    ballots = ballots_of(votes)
    live_ids = [b.user_id for b in live_approvals(ballots, as_utc(signed_at))]
    live_votes = [v for v in votes if v.user_id in set(live_ids) and v.selection == APPROVED]
    proposal = engine.Proposal(
        activity_type=activity.type, parameters=params, requester_id=user.id,
        approvers=approver_variables(session, live_ids),
        credentials=credential_variables(session, live_votes),
        rejecters=rejecters(ballots),
        context=condition_context(session, activity.organization_id, activity.type, params),
        now=now())
    policies = [engine.Policy(p.id, p.effect, p.condition, p.consensus, p.time_expression)
                for p in org_policies(session, user.organization_id)]
    return engine.evaluate(policies, proposal, _root_quorum(session, user.organization_id,
                                                            live_ids))


def explained(decision: engine.PolicyVerdict) -> str:
    """The verdict's reason with the policies that denied it, by id."""
    denying = [o.policy_id for o in decision.policy_outcomes
               if o.outcome is engine.Outcome.DENY_EXPLICIT]
    if denying:
        return f"{decision.reason} (policy {', '.join(denying)})"
    return decision.reason
