"""``list_secrets``: the organization's secrets' metadata, newest first (never a value)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.secrets import Secret
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
from infra.secrets.store import render_metadata
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1ListSecretsRequest``."""

    organization_id: str
    pagination_options: Pagination | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    rows = fetch_page(ctx.session,
                      select(Secret).where(Secret.organization_id == params.organization_id),
                      Secret.created_at, Secret.id, params.pagination_options, newest_first=True)
    return {"secrets": [render_metadata(r) for r in rows]}


SPEC = QuerySpec(path="list_secrets", params=Params, run=run)
