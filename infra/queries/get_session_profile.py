"""``get_session_profile``: one profile the organization created or inherits from its parent."""

from __future__ import annotations

from typing import Any

from infra.access.session_profiles import render, visible_profile
from infra.db.models.access import SessionProfile
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetSessionProfileRequest``."""

    organization_id: str
    session_profile_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    visible_profile(ctx.session, params.organization_id, params.session_profile_id)
    row = ctx.session.get(SessionProfile, params.session_profile_id)
    assert row is not None
    return {"sessionProfile": render(row)}


SPEC = QuerySpec(path="get_session_profile", params=Params, run=run)
