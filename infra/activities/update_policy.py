"""``update_policy``: change some fields of a policy (absent fields are kept).

Note the ``policy`` prefixes of V2's parameter names, unlike ``create_policy``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.policy.text import check_policy_fields
from infra.stored_policies import Effect, policy_in_org, validate_expressions
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdatePolicyIntentV2``."""

    policy_id: str
    policy_name: str | None = Field(default=None, max_length=256)
    policy_effect: Effect | None = None
    policy_condition: str | None = None
    policy_consensus: str | None = None
    policy_notes: str | None = None
    time: str | None = None


def _validate(params: Params) -> None:
    check_policy_fields("parameters.", policyName=params.policy_name,
                        policyCondition=params.policy_condition,
                        policyConsensus=params.policy_consensus, policyNotes=params.policy_notes,
                        time=params.time)
    validate_expressions(params.policy_condition, params.policy_consensus, params.time, "parameters.")


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params)
    policy_in_org(ctx.session, ctx.organization_id, params.policy_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params)
    policy = policy_in_org(ctx.session, ctx.organization_id, params.policy_id)
    changes = {
        "name": params.policy_name,
        "effect": params.policy_effect,
        "condition": params.policy_condition,
        "consensus": params.policy_consensus,
        "notes": params.policy_notes,
        "time_expression": params.time,
    }
    for attribute, value in changes.items():
        if value is not None:
            setattr(policy, attribute, value)
    policy.version += 1
    policy.updated_at = ctx.now
    return {"policyId": policy.id}


SPEC = ActivitySpec(
    path="update_policy",
    versions=(
        Version("ACTIVITY_TYPE_UPDATE_POLICY_V2", Params, "updatePolicyIntentV2", "updatePolicyResultV2"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="POLICY",
    action="UPDATE",
)
