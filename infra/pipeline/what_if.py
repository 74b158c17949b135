"""What the engine would decide on an activity with a draft policy in force, reading only.

The policy editor's check (``evaluate_policy_draft``): the activity's proposal is built as
:func:`infra.pipeline.decide.decide` builds it (votes, approvers, credentials, condition
variables, feature gates, root quorum), always with the policy variables loaded, and evaluated
with the draft added to the submitter's organization's policies (or standing for one of them).
Nothing is stored and no status moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from infra.activities.spec import ActivitySpec
from infra.clock import now
from infra.db.activity_rows import APPROVED, ActivityRow, AnyActivity
from infra.pipeline import engine
from infra.pipeline.conditions import condition_context
from infra.pipeline.decide import (
    _entitled_voter,
    _features,
    _root_quorum,
    _unvoting_submitter,
    ballot_of,
)
from infra.pipeline.gates import gating_feature
from infra.pipeline.votes import (
    approver_variables,
    ballots_of,
    credential_variables,
    live_approvals,
    rejecters,
)
from infra.stored_policies import org_policies


@dataclass(frozen=True)
class WhatIf:
    """What the engine would decide on an activity with a draft policy among the stored ones.

    ``draft`` is the draft's own outcome on the activity's variables; ``decision`` the whole
    engine's verdict (``settled_before_policies``: gates, a rejection or the root quorum
    decide it and no policy, the draft included, is consulted).
    """

    decision: engine.PolicyVerdict
    draft: engine.PolicyOutcome
    settled_before_policies: bool


def what_if(session: Session, activity: AnyActivity, spec: ActivitySpec, draft: engine.Policy,
            replacing: str | None = None) -> WhatIf:
    """Decide ``activity`` as :func:`decide` would now, with ``draft`` added to (or, with
    ``replacing``, standing for that policy among) the submitter's organization's policies.

    Reads only: nothing is stored, no status moves (the policy editor's check).
    """
    activity = activity if isinstance(activity, ActivityRow) else ActivityRow.of(activity)
    ballot = ballot_of(session, activity)
    user = ballot.submitter or _unvoting_submitter(session, ballot)
    moment = now()
    ballots = ballots_of(ballot.votes)
    live_ids = [b.user_id for b in live_approvals(ballots, moment)]
    live_votes = [v for v in ballot.votes
                  if v.user_id in set(live_ids) and v.selection == APPROVED]
    params: dict[str, Any] = next(iter(activity.intent.values()), {}) if activity.intent else {}
    governing = user.organization_id if user is not None else activity.organization_id
    proposal = engine.Proposal(
        activity_type=activity.type,
        parameters=params,
        requester_id=user.id if user is not None else "",
        approvers=approver_variables(session, live_ids),
        credentials=credential_variables(session, live_votes),
        rejecters=rejecters(ballots),
        context=condition_context(session, activity.organization_id, activity.type, params),
        now=moment,
        features=(_features(session, {activity.organization_id, governing})
                  if gating_feature(activity.type, params) else {}),
        voter_entitled=bool(spec.consensus_vote and user is not None
                            and _entitled_voter(session, activity, params, user.id)),
        resource_action=spec.resource_action,
    )
    quorum = _root_quorum(ballot, governing)
    policies = [engine.Policy(p.id, p.effect, p.condition, p.consensus, p.time_expression)
                for p in org_policies(session, governing) if p.id != replacing]
    policies.append(draft)
    return WhatIf(
        decision=engine.evaluate(policies, proposal, quorum),
        draft=engine.evaluate_policy(draft, engine.variables_for(proposal)),
        settled_before_policies=engine.decided_before_policies(proposal, quorum),
    )
