"""``get_smart_contract_interface``: one stored ABI / IDL."""

from __future__ import annotations

from typing import Any

from infra.activities.delete_smart_contract_interface import find_interface
from infra.identity.directory import render_contract_interface
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    smart_contract_interface_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    row = find_interface(ctx.session, params.organization_id, params.smart_contract_interface_id)
    return {"smartContractInterface": render_contract_interface(row)}


SPEC = QuerySpec(path="get_smart_contract_interface", params=Params, run=run)
