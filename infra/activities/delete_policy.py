"""``delete_policy``: remove one policy."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.stored_policies import policy_in_org
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeletePolicyIntent``."""

    policy_id: str


def check(params: Params, ctx: CheckContext) -> None:
    policy_in_org(ctx.session, ctx.organization_id, params.policy_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    policy = policy_in_org(ctx.session, ctx.organization_id, params.policy_id)
    ctx.session.delete(policy)
    return {"policyId": params.policy_id}


SPEC = ActivitySpec(
    path="delete_policy",
    versions=(Version("ACTIVITY_TYPE_DELETE_POLICY", Params, "deletePolicyIntent", "deletePolicyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="POLICY",
    action="DELETE",
)
