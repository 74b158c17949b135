"""``delete_policies``: remove several policies at once (all or none)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.stored_policies import policy_in_org
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeletePoliciesIntent``."""

    policy_ids: list[str] = Field(min_length=1)


def _unique(params: Params) -> list[str]:
    return list(dict.fromkeys(params.policy_ids))


def check(params: Params, ctx: CheckContext) -> None:
    for policy_id in _unique(params):
        policy_in_org(ctx.session, ctx.organization_id, policy_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    ids = _unique(params)
    # Resolve every id first: one unknown id deletes nothing (404).
    policies = [policy_in_org(ctx.session, ctx.organization_id, i) for i in ids]
    for policy in policies:
        ctx.session.delete(policy)
    return {"policyIds": ids}


SPEC = ActivitySpec(
    path="delete_policies",
    versions=(
        Version("ACTIVITY_TYPE_DELETE_POLICIES", Params, "deletePoliciesIntent", "deletePoliciesResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="POLICY",
    action="DELETE",
)
