"""``delete_users``: remove users (and, by cascade, all their credentials)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import Organization, User
from infra.errors import FailedPrecondition
from infra.identity.directory import users_in_org
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeleteUsersIntent``."""

    user_ids: list[str] = Field(min_length=1)


def _check(session: Any, organization_id: str, params: Params) -> list[User]:
    users = users_in_org(session, organization_id, params.user_ids)
    org = session.get(Organization, organization_id)
    removing_roots = sum(1 for u in users if u.is_root)
    if removing_roots and org is not None:
        roots_left = (
            session.query(User)
            .filter(User.organization_id == organization_id, User.is_root.is_(True))
            .count()
            - removing_roots
        )
        if roots_left < org.root_quorum_threshold:
            raise FailedPrecondition(
                "deleting these root users would leave fewer root users than the root quorum "
                f"threshold ({org.root_quorum_threshold}); update the root quorum first"
            )
    return users


def check(params: Params, ctx: CheckContext) -> None:
    _check(ctx.session, ctx.organization_id, params)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    users = _check(ctx.session, ctx.organization_id, params)
    for user in users:
        ctx.session.delete(user)
    return {"userIds": [u.id for u in users]}


SPEC = ActivitySpec(
    path="delete_users",
    versions=(Version("ACTIVITY_TYPE_DELETE_USERS", Params, "deleteUsersIntent", "deleteUsersResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="USER",
    action="DELETE",
)
