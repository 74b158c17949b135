"""``update_root_quorum``: set the root users and how many must approve (root quorum only)."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import Organization, User
from infra.errors import InvalidRequest, NotFound
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdateRootQuorumIntent``."""

    threshold: int = Field(ge=1)
    user_ids: list[str] = Field(min_length=1, max_length=caps.USERS)


def _members(params: Params, session: Any, organization_id: str) -> list[User]:
    ids = list(dict.fromkeys(params.user_ids))
    if params.threshold > len(ids):
        raise InvalidRequest(
            f"threshold {params.threshold} exceeds the {len(ids)} users of the quorum; "
            "send a threshold between 1 and the number of userIds",
            field="parameters.threshold",
        )
    users = session.scalars(
        select(User).where(User.id.in_(ids), User.organization_id == organization_id)
    ).all()
    missing = sorted(set(ids) - {u.id for u in users})
    if missing:
        raise NotFound(f"users not found in organization: {', '.join(missing)}")
    return list(users)


def check(params: Params, ctx: CheckContext) -> None:
    _members(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    members = {u.id for u in _members(params, ctx.session, ctx.organization_id)}
    org = ctx.session.get(Organization, ctx.organization_id)
    assert org is not None
    for user in ctx.session.scalars(select(User).where(User.organization_id == org.id)):
        user.is_root = user.id in members
    org.root_quorum_threshold = params.threshold
    org.version += 1
    return {}


SPEC = ActivitySpec(
    path="update_root_quorum",
    versions=(
        Version(
            "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", Params, "updateRootQuorumIntent", "updateRootQuorumResult"
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="UPDATE",
    root_quorum_only=True,
)
