"""``create_policies``: add several policies at once (all or nothing)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.policy.text import check_policy_fields
from infra.stored_policies import PolicyParams, add_policy, check_room, validate_expressions
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreatePoliciesIntent``."""

    policies: list[PolicyParams] = Field(min_length=1, max_length=caps.POLICIES)


def _validate(params: Params) -> None:
    for i, policy in enumerate(params.policies):
        check_policy_fields(f"parameters.policies[{i}].", policyName=policy.policy_name,
                            condition=policy.condition, consensus=policy.consensus,
                            notes=policy.notes, time=policy.time)
        validate_expressions(policy.condition, policy.consensus, policy.time, f"parameters.policies[{i}].")


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params)
    check_room(ctx.session, ctx.organization_id, len(params.policies))


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params)
    check_room(ctx.session, ctx.organization_id, len(params.policies))
    return {"policyIds": [add_policy(ctx.session, ctx.organization_id, p).id for p in params.policies]}


SPEC = ActivitySpec(
    path="create_policies",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_POLICIES", Params, "createPoliciesIntent", "createPoliciesResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="POLICY",
    action="CREATE",
)
