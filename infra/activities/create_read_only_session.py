"""``create_read_only_session``: a read-only session JWT for the stamping user (legacy)."""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import select

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.db.models.activities import Vote
from infra.db.models.organizations import Organization, User
from infra.errors import NotFound
from infra.messaging import queues
from infra.sessions.tokens import issue_session_jwt
from infra.wiremodel import WireModel
from infra.worker_services import service_keys

#: Read-only sessions last one hour.
READ_ONLY_SECONDS: Final = 3600


class Params(WireModel):
    """``v1CreateReadOnlySessionIntent`` (no fields)."""


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user = ctx.session.get(User, ctx.user_id) if ctx.user_id else None
    if user is None:
        raise NotFound("the stamping user no longer exists")
    org = ctx.session.get(Organization, user.organization_id)
    principal_key = ctx.session.scalar(select(Vote.public_key).where(
        Vote.activity_id == ctx.activity.id).limit(1)) or ""
    token = issue_session_jwt(service_keys(ctx.services), user_id=user.id,
                              organization_id=user.organization_id,
                              public_key_hex=principal_key, session_type="SESSION_TYPE_READ_ONLY",
                              expiration_seconds=READ_ONLY_SECONDS, now=ctx.now,
                              session=ctx.session)
    return {
        "organizationId": user.organization_id,
        "organizationName": org.name if org else "",
        "userId": user.id,
        "username": user.name,
        "session": token,
        "sessionExpiry": str(int(ctx.now.timestamp()) + READ_ONLY_SECONDS),
    }


SPEC = ActivitySpec(
    path="create_read_only_session",
    versions=(Version("ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION", Params,
                      "createReadOnlySessionIntent", "createReadOnlySessionResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="AUTH",
    action="CREATE",
)
