"""``update_mfa_policy``: change a user's MFA policy; fields not sent keep their value."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.create_mfa_policy import Step, check_order
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.access import MfaPolicy
from infra.errors import InvalidRequest, NotFound
from infra.messaging import queues
from infra.pipeline.mfa import check_condition, normalise_steps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateMfaPolicyIntent``."""

    user_id: str
    mfa_policy_id: str
    mfa_policy_name: str | None = Field(default=None, max_length=256)
    condition: str | None = Field(default=None, max_length=10_000)
    required_authentication_methods: list[Step] | None = None
    order: int | None = None
    notes: str | None = Field(default=None, max_length=10_000)


def policy_of(session: Any, organization_id: str, user_id: str, policy_id: str) -> MfaPolicy:
    """The user's policy ``policy_id``, or a 404."""
    user_in_org(session, organization_id, user_id)
    row = session.get(MfaPolicy, policy_id)
    if row is None or row.user_id != user_id or row.organization_id != organization_id:
        raise NotFound(f"MFA policy not found for user {user_id}: {policy_id}")
    return row


def _validate(params: Params, ctx: CheckContext | ActivityContext) -> MfaPolicy:
    row = policy_of(ctx.session, ctx.organization_id, params.user_id, params.mfa_policy_id)
    if params.mfa_policy_name is not None and not params.mfa_policy_name.strip():
        raise InvalidRequest("mfaPolicyName is empty", field="parameters.mfaPolicyName")
    if params.condition is not None:
        check_condition(params.condition)
    check_order(params.order)
    if params.required_authentication_methods is not None:
        normalise_steps(params.required_authentication_methods)
    return row


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = _validate(params, ctx)
    if params.mfa_policy_name is not None:
        row.name = params.mfa_policy_name.strip()
    if params.condition is not None:
        row.condition = params.condition
    if params.required_authentication_methods is not None:
        row.required_methods = normalise_steps(params.required_authentication_methods)
    if params.order is not None:
        row.order = params.order
    if params.notes is not None:
        row.notes = params.notes
    ctx.session.flush()
    return {"mfaPolicyId": row.id}


SPEC = ActivitySpec(
    path="update_mfa_policy",
    versions=(Version("ACTIVITY_TYPE_UPDATE_MFA_POLICY", Params, "updateMfaPolicyIntent",
                      "updateMfaPolicyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="MFA_POLICY",
    action="UPDATE",
    root_quorum_only=True,
)
