"""``list_app_proofs``: the app proofs of an activity (``v1AppProof``; ``infra.audit.boots``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.audit import boots
from infra.db.models.activities import Activity
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    activity_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    owner = ctx.session.execute(select(Activity.organization_id).where(
        Activity.id == params.activity_id)).scalar_one_or_none()
    if owner != params.organization_id:
        raise NotFound(f"activity not found: {params.activity_id}")
    return {"appProofs": boots.proofs_of(ctx.session, [params.activity_id]).get(
        params.activity_id, [])}


SPEC = QuerySpec(path="list_app_proofs", params=Params, run=run)
