"""``get_mfa_policy``: one of a user's MFA policies."""

from __future__ import annotations

from typing import Any

from infra.access.mfa_view import render
from infra.activities.update_mfa_policy import policy_of
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetMfaPolicyRequest``."""

    organization_id: str
    user_id: str
    mfa_policy_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    row = policy_of(ctx.session, params.organization_id, params.user_id, params.mfa_policy_id)
    return {"mfaPolicy": render(row)}


SPEC = QuerySpec(path="get_mfa_policy", params=Params, run=run)
