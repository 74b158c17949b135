"""``get_api_key``: one API key of the organization."""

from __future__ import annotations

from typing import Any

from infra.db.models.organizations import ApiKey
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.views.users import render_api_key
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    api_key_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    key = ctx.session.get(ApiKey, params.api_key_id)
    if key is None or key.organization_id != params.organization_id:
        raise NotFound(f"api key not found: {params.api_key_id}")
    return {"apiKey": render_api_key(key)}


SPEC = QuerySpec(path="get_api_key", params=Params, run=run)
