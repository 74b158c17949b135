"""``set_organization_feature``: turn on / configure a ``FEATURE_NAME_*`` (root quorum only)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import OrganizationFeature
from infra.messaging import queues
from infra.validation.features import FeatureName, validate_feature
from infra.webhooks import endpoints
from infra.webhooks.destinations import UnsafeDestination
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1SetOrganizationFeatureIntent``."""

    name: str
    value: str


def render_features(session: Any, organization_id: str) -> list[dict[str, str]]:
    """The organization's features as ``v1Feature`` (by name)."""
    rows = session.scalars(
        select(OrganizationFeature)
        .where(OrganizationFeature.organization_id == organization_id)
        .order_by(OrganizationFeature.name)
    )
    return [{"name": f.name, "value": f.value} for f in rows]


def check(params: Params, ctx: CheckContext) -> None:
    validate_feature(params.name, params.value)


def _check_webhook_destination(value: str, ctx: ActivityContext) -> None:
    """The webhook URL passes the endpoint API's destination rules (https, public address,
    unless ``WALLETD_WEBHOOK_ALLOW`` lists it)."""
    allow = endpoints.allow_list(ctx.services.settings.webhook_allow)
    try:
        endpoints.check_url(value, allow)
    except UnsafeDestination as exc:
        raise UnsafeDestination(
            f"invalid value for {FeatureName.WEBHOOK.value}: {exc.message}", field="value"
        ) from exc


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    feature, value = validate_feature(params.name, params.value)
    if feature is FeatureName.WEBHOOK and value:
        _check_webhook_destination(value, ctx)
    row = ctx.session.get(OrganizationFeature, (ctx.organization_id, feature.value))
    if row is None:
        ctx.session.add(
            OrganizationFeature(organization_id=ctx.organization_id, name=feature.value, value=value)
        )
    else:
        row.value = value
    ctx.session.flush()
    return {"features": render_features(ctx.session, ctx.organization_id)}


SPEC = ActivitySpec(
    path="set_organization_feature",
    versions=(
        Version(
            "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
            Params,
            "setOrganizationFeatureIntent",
            "setOrganizationFeatureResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="UPDATE",
    root_quorum_only=True,
)
