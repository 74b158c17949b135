"""``get_session_profiles``: the profiles the organization created or inherits, oldest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.access.session_profiles import render
from infra.db.models.access import SessionProfile
from infra.identity.ancestry import organization_chain
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetSessionProfilesRequest``."""

    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    chain = organization_chain(ctx.session, params.organization_id) or [params.organization_id]
    rows = ctx.session.scalars(select(SessionProfile).where(
        SessionProfile.organization_id.in_(chain))
        .order_by(SessionProfile.created_at, SessionProfile.id))
    return {"sessionProfiles": [render(r) for r in rows]}


SPEC = QuerySpec(path="get_session_profiles", params=Params, run=run)
