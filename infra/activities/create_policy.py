"""``create_policy``: add one policy (its text must be readable, ``infra.policy.text``, and its
expressions parse; either failing is a 400)."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.policy.text import check_policy_fields
from infra.stored_policies import PolicyParams, add_policy, check_room, validate_expressions


class Params(PolicyParams):
    """``v1CreatePolicyIntentV3``."""


def _validate(params: Params) -> None:
    check_policy_fields("parameters.", policyName=params.policy_name, condition=params.condition,
                        consensus=params.consensus, notes=params.notes, time=params.time)
    validate_expressions(params.condition, params.consensus, params.time, "parameters.")


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params)
    check_room(ctx.session, ctx.organization_id, 1)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params)
    check_room(ctx.session, ctx.organization_id, 1)
    return {"policyId": add_policy(ctx.session, ctx.organization_id, params).id}


SPEC = ActivitySpec(
    path="create_policy",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_POLICY_V3", Params, "createPolicyIntentV3", "createPolicyResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="POLICY",
    action="CREATE",
)
