"""``delete_mfa_policy``: remove a user's MFA policy (root quorum only)."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.activities.update_mfa_policy import policy_of
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteMfaPolicyIntent``."""

    user_id: str
    mfa_policy_id: str


def check(params: Params, ctx: CheckContext) -> None:
    policy_of(ctx.session, ctx.organization_id, params.user_id, params.mfa_policy_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = policy_of(ctx.session, ctx.organization_id, params.user_id, params.mfa_policy_id)
    ctx.session.delete(row)
    ctx.session.flush()
    return {"mfaPolicyId": params.mfa_policy_id}


SPEC = ActivitySpec(
    path="delete_mfa_policy",
    versions=(Version("ACTIVITY_TYPE_DELETE_MFA_POLICY", Params, "deleteMfaPolicyIntent",
                      "deleteMfaPolicyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="MFA_POLICY",
    action="DELETE",
    root_quorum_only=True,
)
