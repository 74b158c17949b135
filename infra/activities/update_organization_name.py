"""``update_organization_name``: rename the organization (root quorum only)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.db.models.organizations import Organization
from infra.errors import NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateOrganizationNameIntent``."""

    organization_name: str = Field(min_length=1, max_length=256)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    org = ctx.session.get(Organization, ctx.organization_id)
    if org is None:
        raise NotFound(f"organization not found: {ctx.organization_id}")
    org.name = params.organization_name
    org.version += 1
    return {"organizationId": org.id, "organizationName": org.name}


SPEC = ActivitySpec(
    path="update_organization_name",
    versions=(
        Version(
            "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME",
            Params,
            "updateOrganizationNameIntent",
            "updateOrganizationNameResult",
        ),
    ),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="UPDATE",
    root_quorum_only=True,
)
