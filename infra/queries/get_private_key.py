"""``get_private_key``: one standalone private key."""

from __future__ import annotations

from typing import Any

from infra.db.models.wallets import PrivateKey
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wallets.views import render_private_key
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    private_key_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    key = ctx.session.get(PrivateKey, params.private_key_id)
    if key is None or key.organization_id != params.organization_id:
        raise NotFound(f"private key not found: {params.private_key_id}")
    return {"privateKey": render_private_key(key)}


SPEC = QuerySpec(path="get_private_key", params=Params, run=run)
