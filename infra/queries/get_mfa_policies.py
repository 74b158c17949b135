"""``get_mfa_policies``: a user's MFA policies in evaluation order."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.access.mfa_view import render
from infra.activities.common import user_in_org
from infra.db.models.access import MfaPolicy
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetMfaPoliciesRequest``."""

    organization_id: str
    user_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    user_in_org(ctx.session, params.organization_id, params.user_id)
    rows = ctx.session.scalars(select(MfaPolicy).where(MfaPolicy.user_id == params.user_id)
                               .order_by(MfaPolicy.order, MfaPolicy.created_at, MfaPolicy.id))
    return {"mfaPolicies": [render(r) for r in rows]}


SPEC = QuerySpec(path="get_mfa_policies", params=Params, run=run)
