"""The one policy decision on a concrete transaction: may this ``eth.tx`` be signed.

The activity's own decision (``infra.pipeline.decide``) judges the intent, which lacks what
walletd fills in later. Whenever walletd signs something the policy engine did not see, the
engine (``infra.pipeline.engine.evaluate``) judges the transaction about to be signed with the
organization's policies as they are now, the activity's submitter and the approvals live at a
given moment, and the ``eth.tx`` variables of that transaction (gas and fees, and the nonce
once it is known, built by ``infra.pipeline.conditions.condition_context`` as for the intent):

- the first signature, when the caller left gas or fees to walletd (``infra.broadcast.eth_send``,
  before any nonce is taken): anything but ``allow`` fails the activity with ``PolicyDenied``;
- every replacement of a stuck transaction (``infra.broadcast.tracker``), with the approvals
  that counted when the original was signed: anything but ``allow`` (a denial, a consensus
  that would need new votes) stops replacement, since nobody is asked again for a transaction
  already sent, so it is given up with the reason.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.clock import as_utc, now
from infra.db.activity_rows import APPROVED
from infra.db.models.activities import Activity
from infra.db.models.organizations import Organization, User
from infra.pipeline import engine
from infra.pipeline.conditions import condition_context
from infra.pipeline.votes import (
    activity_votes,
    approver_variables,
    ballots_of,
    credential_variables,
    live_approvals,
    rejecters,
)
from infra.stored_policies import org_policies


def concrete_parameters(params: dict[str, Any], unsigned: dict[str, Any]) -> dict[str, Any]:
    """The activity's parameters with what the transaction to sign fixes (decimal strings, as
    a caller sends them): the policies see the gas, fees and (once taken) nonce signed."""
    fixed = {"nonce": "nonce", "gasLimit": "gas", "maxFeePerGas": "maxFeePerGas",
             "maxPriorityFeePerGas": "maxPriorityFeePerGas"}
    return {**params, **{wire: str(unsigned[name]) for wire, name in fixed.items()
                         if unsigned.get(name) is not None}}


def _root_quorum(session: Session, organization_id: str,
                 approver_ids: list[str]) -> engine.RootQuorum:
    threshold = session.scalar(select(Organization.root_quorum_threshold)
                               .where(Organization.id == organization_id))
    roots = frozenset(session.scalars(select(User.id).where(
        User.organization_id == organization_id, User.is_root.is_(True),
        User.id.in_(approver_ids)))) if approver_ids else frozenset()
    return engine.RootQuorum(1 if threshold is None else threshold, roots)


def verdict(session: Session, activity_id: str, unsigned: dict[str, Any],
            approved_at: datetime) -> engine.PolicyVerdict:
    """The policy engine's verdict on signing ``unsigned`` for activity ``activity_id``.

    The approvals live at ``approved_at`` are the approvers: now for a first signature, when
    the original was signed for a replacement (an approval window that closed since does not
    take them away).
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
    params = concrete_parameters(intent, unsigned)
    votes = activity_votes(session, activity.id)
    ballots = ballots_of(votes)
    live_ids = [b.user_id for b in live_approvals(ballots, as_utc(approved_at))]
    live_votes = [v for v in votes if v.user_id in set(live_ids) and v.selection == APPROVED]
    proposal = engine.Proposal(
        activity_type=activity.type, parameters=params, requester_id=user.id,
        approvers=approver_variables(session, live_ids),
        credentials=credential_variables(session, live_votes),
        rejecters=rejecters(ballots),
        context=condition_context(session, activity.organization_id, activity.type, params),
        now=now(), resource_action=registry().resource_action(activity.type))
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
