"""``create_smart_contract_interface``: store a validated Ethereum ABI or Solana IDL."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import SmartContractInterface
from infra.messaging import queues
from infra.validation.contract_interfaces import validate_contract_address, validate_interface
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateSmartContractInterfaceIntent``."""

    smart_contract_address: str
    smart_contract_interface: str
    type: str
    label: str = Field(min_length=1, max_length=256)
    notes: str | None = None


def _validate(params: Params) -> None:
    validate_interface(params.type, params.smart_contract_interface)
    validate_contract_address(params.type, params.smart_contract_address)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params)
    row = SmartContractInterface(
        organization_id=ctx.organization_id,
        address=params.smart_contract_address,
        interface=params.smart_contract_interface,
        interface_type=params.type,
        label=params.label,
        notes=params.notes or "",
        created_at=ctx.now,
        updated_at=ctx.now,
    )
    ctx.session.add(row)
    ctx.session.flush()
    return {"smartContractInterfaceId": row.id}


SPEC = ActivitySpec(
    path="create_smart_contract_interface",
    versions=(
        Version(
            "ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE",
            Params,
            "createSmartContractInterfaceIntent",
            "createSmartContractInterfaceResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="SMART_CONTRACT_INTERFACE",
    action="CREATE",
)
