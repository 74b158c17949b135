"""``get_mfa_status``: each MFA step an activity waits for, per user (``@turnkey/core``
polls it while an activity is ``ACTIVITY_STATUS_AUTHENTICATORS_NEEDED``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.activities import Activity
from infra.errors import NotFound
from infra.pipeline.mfa import status
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetMfaStatusRequest``."""

    organization_id: str
    activity_id: str
    user_id: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    activity = ctx.session.scalar(select(Activity).where(
        Activity.id == params.activity_id, Activity.organization_id == params.organization_id))
    if activity is None:
        raise NotFound(f"activity not found: {params.activity_id}")
    return {"mfaStatuses": status(ctx.session, activity, params.user_id)}


SPEC = QuerySpec(path="get_mfa_status", params=Params, run=run)
