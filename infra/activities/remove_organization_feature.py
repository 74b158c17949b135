"""``remove_organization_feature``: remove a ``FEATURE_NAME_*`` (root quorum only)."""

from __future__ import annotations

from typing import Any

from infra.activities.set_organization_feature import render_features
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import OrganizationFeature
from infra.errors import NotFound
from infra.messaging import queues
from infra.validation.features import feature_name
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1RemoveOrganizationFeatureIntent``."""

    name: str


def _find(params: Params, session: Any, organization_id: str) -> OrganizationFeature:
    feature = feature_name(params.name)
    row = session.get(OrganizationFeature, (organization_id, feature.value))
    if row is None:
        raise NotFound(f"feature {feature.value} is not set on this organization")
    return row


def check(params: Params, ctx: CheckContext) -> None:
    _find(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    ctx.session.delete(_find(params, ctx.session, ctx.organization_id))
    ctx.session.flush()
    return {"features": render_features(ctx.session, ctx.organization_id)}


SPEC = ActivitySpec(
    path="remove_organization_feature",
    versions=(
        Version(
            "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE",
            Params,
            "removeOrganizationFeatureIntent",
            "removeOrganizationFeatureResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="UPDATE",
    root_quorum_only=True,
)
