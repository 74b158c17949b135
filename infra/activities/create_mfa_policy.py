"""``create_mfa_policy``: a user's MFA policy (root quorum only; ``infra.pipeline.mfa``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.access import MfaPolicy
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.pipeline.mfa import check_condition, normalise_steps
from infra.wiremodel import WireModel


class Method(WireModel):
    """``v1AuthenticationMethodParams``."""

    type: str
    id: str | None = None


class Step(WireModel):
    """``v1RequiredAuthenticationMethodParams``."""

    any: list[Method]


class Params(WireModel):
    """``v1CreateMfaPolicyIntent``."""

    user_id: str
    mfa_policy_name: str = Field(max_length=256)
    condition: str = Field(max_length=10_000)
    required_authentication_methods: list[Step]
    order: int
    notes: str | None = Field(default=None, max_length=10_000)


def check_order(order: int | None) -> None:
    if order is not None and not 0 <= order <= 1_000_000:
        raise InvalidRequest("order must be from 0 to 1000000", field="parameters.order")


def _validate(params: Params, ctx: CheckContext | ActivityContext) -> list[dict[str, Any]]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    if not params.mfa_policy_name.strip():
        raise InvalidRequest("mfaPolicyName is empty", field="parameters.mfaPolicyName")
    check_condition(params.condition)
    check_order(params.order)
    return normalise_steps(params.required_authentication_methods)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    steps = _validate(params, ctx)
    row = MfaPolicy(organization_id=ctx.organization_id, user_id=params.user_id,
                    name=params.mfa_policy_name.strip(), condition=params.condition,
                    required_methods=steps, order=params.order, notes=params.notes or "")
    ctx.session.add(row)
    ctx.session.flush()
    return {"mfaPolicyId": row.id}


SPEC = ActivitySpec(
    path="create_mfa_policy",
    versions=(Version("ACTIVITY_TYPE_CREATE_MFA_POLICY", Params, "createMfaPolicyIntent",
                      "createMfaPolicyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="MFA_POLICY",
    action="CREATE",
    root_quorum_only=True,
)
