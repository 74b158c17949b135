"""``delete_smart_contract_interface``: remove a stored ABI / IDL."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import SmartContractInterface
from infra.errors import NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteSmartContractInterfaceIntent``."""

    smart_contract_interface_id: str


def find_interface(session: Any, organization_id: str, interface_id: str) -> SmartContractInterface:
    """The interface of the organization, or a 404."""
    row = session.get(SmartContractInterface, interface_id)
    if row is None or row.organization_id != organization_id:
        raise NotFound(f"smart contract interface not found: {interface_id}")
    return row


def check(params: Params, ctx: CheckContext) -> None:
    find_interface(ctx.session, ctx.organization_id, params.smart_contract_interface_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = find_interface(ctx.session, ctx.organization_id, params.smart_contract_interface_id)
    ctx.session.delete(row)
    return {"smartContractInterfaceId": params.smart_contract_interface_id}


SPEC = ActivitySpec(
    path="delete_smart_contract_interface",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE",
            Params,
            "deleteSmartContractInterfaceIntent",
            "deleteSmartContractInterfaceResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="SMART_CONTRACT_INTERFACE",
    action="DELETE",
)
