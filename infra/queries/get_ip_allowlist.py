"""``get_ip_allowlist``: the organization's list, or one API key's (``publicKey``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.access.ip_allowlist import render
from infra.db.models.access import IpAllowlist
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetIpAllowlistRequest``."""

    organization_id: str
    public_key: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    public_key = (params.public_key or "").strip().lower().removeprefix("0x")
    row = ctx.session.scalar(select(IpAllowlist).where(
        IpAllowlist.organization_id == params.organization_id,
        IpAllowlist.public_key == public_key))
    return {"allowlist": render(row, params.organization_id, public_key or None)}


SPEC = QuerySpec(path="get_ip_allowlist", params=Params, run=run)
