"""``list_user_tags``: the organization's user tags (``datav1Tag``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.identity import Tag
from infra.identity.directory import TAG_TYPE_USER, render_tag
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    rows = ctx.session.scalars(
        select(Tag)
        .where(Tag.organization_id == params.organization_id, Tag.tag_type == TAG_TYPE_USER)
        .order_by(Tag.created_at, Tag.id)
    )
    return {"userTags": [render_tag(t) for t in rows]}


SPEC = QuerySpec(path="list_user_tags", params=Params, run=run)
