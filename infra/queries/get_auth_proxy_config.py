"""``get_auth_proxy_config``: the organization's auth proxy configuration."""

from __future__ import annotations

from typing import Any

from infra.authproxy.config import config_of, render
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    return {"config": render(config_of(ctx.session, params.organization_id))}


SPEC = QuerySpec(path="get_auth_proxy_config", params=Params, run=run)
