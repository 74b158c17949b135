"""``create_policy``: add one policy (expressions are parsed; a syntax error is a 400)."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.stored_policies import PolicyParams, add_policy, check_room, validate_expressions


class Params(PolicyParams):
    """``v1CreatePolicyIntentV3``."""


def check(params: Params, ctx: CheckContext) -> None:
    validate_expressions(params.condition, params.consensus, params.time, "parameters.")
    check_room(ctx.session, ctx.organization_id, 1)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    validate_expressions(params.condition, params.consensus, params.time, "parameters.")
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
