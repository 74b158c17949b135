"""``list_activities``: an organization's activities, newest first, filtered and paginated."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator
from sqlalchemy import select

from infra.db.models.activities import Activity
from infra.openapi import check_enum
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
from infra.validation import caps
from infra.views.activities import render_activities
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    filter_by_status: list[str] | None = Field(default=None, max_length=caps.FILTERS)
    filter_by_type: list[str] | None = Field(default=None, max_length=caps.FILTERS)
    pagination_options: Pagination | None = None

    @field_validator("filter_by_status")
    @classmethod
    def _statuses(cls, value: list[str] | None) -> list[str] | None:
        return check_enum(value, "v1ActivityStatus")

    @field_validator("filter_by_type")
    @classmethod
    def _types(cls, value: list[str] | None) -> list[str] | None:
        return check_enum(value, "v1ActivityType")


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    stmt = select(Activity).where(Activity.organization_id == params.organization_id)
    if params.filter_by_status:
        stmt = stmt.where(Activity.status.in_(params.filter_by_status))
    if params.filter_by_type:
        stmt = stmt.where(Activity.type.in_(params.filter_by_type))
    rows = fetch_page(ctx.session, stmt, Activity.created_at, Activity.id,
                      params.pagination_options, newest_first=True)
    return {"activities": render_activities(ctx.session, rows, ctx.principal.user_id)}


SPEC = QuerySpec(path="list_activities", params=Params, run=run)
