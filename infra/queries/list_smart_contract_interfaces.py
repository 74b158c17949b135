"""``list_smart_contract_interfaces``: every stored ABI / IDL of the organization."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.identity import SmartContractInterface
from infra.identity.directory import render_contract_interface
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    rows = ctx.session.scalars(
        select(SmartContractInterface)
        .where(SmartContractInterface.organization_id == params.organization_id)
        .order_by(SmartContractInterface.created_at, SmartContractInterface.id)
    )
    return {"smartContractInterfaces": [render_contract_interface(r) for r in rows]}


SPEC = QuerySpec(path="list_smart_contract_interfaces", params=Params, run=run)
