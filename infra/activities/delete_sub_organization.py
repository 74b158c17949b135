"""``delete_sub_organization``: a sub-organization deletes itself.

Submitted with the sub-organization's own credential and ``organizationId`` (as the rust-sdk
fixture does). Unless ``deleteWithoutExport`` is true, an organization that still holds
wallets or private keys is refused so key material is not lost by accident.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, func, select

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.base import Base
from infra.db.models.identity import DeletedOrganization
from infra.db.models.organizations import Organization, User
from infra.errors import FailedPrecondition, InvalidRequest, NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel

#: Tables whose rows hold key material that should be exported before deletion.
_KEY_TABLES = ("wallets", "private_keys")


class Params(WireModel):
    """``v1DeleteSubOrganizationIntent``."""

    delete_without_export: bool | None = None


def _refuse_unexported_keys(params: Params, session: Any, organization_id: str) -> None:
    if params.delete_without_export:
        return
    for name in _KEY_TABLES:
        table = Base.metadata.tables.get(name)
        if not isinstance(table, Table) or "organization_id" not in table.c:
            continue
        held = session.execute(
            select(func.count()).select_from(table).where(table.c.organization_id == organization_id)
        ).scalar_one()
        if held:
            raise FailedPrecondition(
                f"the sub-organization still holds {name.replace('_', ' ')}; export them first "
                "or set deleteWithoutExport to true"
            )


def _sub_organization(session: Any, organization_id: str) -> Organization:
    org = session.get(Organization, organization_id)
    if org is None or session.get(DeletedOrganization, organization_id) is not None:
        raise NotFound(f"organization not found: {organization_id}")
    if not org.parent_id:
        raise InvalidRequest("only a sub-organization can be deleted; this organization has no parent")
    return org


def check(params: Params, ctx: CheckContext) -> None:
    _sub_organization(ctx.session, ctx.organization_id)
    _refuse_unexported_keys(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    org = _sub_organization(ctx.session, ctx.organization_id)
    _refuse_unexported_keys(params, ctx.session, org.id)
    # The organization row stays so its activities (this one included) remain readable;
    # its users go, and with them (ON DELETE CASCADE) every credential that could act.
    for user in ctx.session.scalars(select(User).where(User.organization_id == org.id)):
        ctx.session.delete(user)
    ctx.session.add(DeletedOrganization(organization_id=org.id, deleted_at=ctx.now))
    return {"subOrganizationUuid": org.id}


SPEC = ActivitySpec(
    path="delete_sub_organization",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION",
            Params,
            "deleteSubOrganizationIntent",
            "deleteSubOrganizationResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="DELETE",
)
