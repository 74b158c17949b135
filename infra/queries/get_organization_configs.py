"""``get_organization_configs``: the organization's features and root quorum."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.activities.set_organization_feature import render_features
from infra.db.models.organizations import Organization, User
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    org = ctx.session.get(Organization, params.organization_id)
    if org is None:
        raise NotFound(f"organization not found: {params.organization_id}")
    roots = ctx.session.scalars(
        select(User.id)
        .where(User.organization_id == org.id, User.is_root.is_(True))
        .order_by(User.created_at, User.id)
    ).all()
    return {
        "configs": {
            "features": render_features(ctx.session, org.id),
            "quorum": {"threshold": org.root_quorum_threshold, "userIds": list(roots)},
        }
    }


SPEC = QuerySpec(path="get_organization_configs", params=Params, run=run)
