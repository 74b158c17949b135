"""``create_session_profile``: a scoped, bounded kind of session (immutable once created).

Root quorum only. Visible to the organization and its sub-organizations
(``infra.access.session_profiles``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.access.session_profiles import MAX_EXPIRATION_SECONDS, check_scope
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.access import SessionProfile
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.sessions.params import seconds
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateSessionProfileIntent``."""

    session_profile_name: str = Field(max_length=256)
    scope: str = Field(max_length=10_000)
    expiration_seconds: str | None = None
    notes: str | None = Field(default=None, max_length=10_000)


def _validate(params: Params) -> int | None:
    if not params.session_profile_name.strip():
        raise InvalidRequest("sessionProfileName is empty", field="parameters.sessionProfileName")
    check_scope(params.scope)
    if params.expiration_seconds is None:
        return None
    return seconds(params.expiration_seconds, 0, "parameters.expirationSeconds",
                   maximum=MAX_EXPIRATION_SECONDS)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = SessionProfile(organization_id=ctx.organization_id,
                         name=params.session_profile_name.strip(), scope=params.scope,
                         expiration_seconds=_validate(params), notes=params.notes or "")
    ctx.session.add(row)
    ctx.session.flush()
    return {"sessionProfileId": row.id}


SPEC = ActivitySpec(
    path="create_session_profile",
    versions=(Version("ACTIVITY_TYPE_CREATE_SESSION_PROFILE", Params,
                      "createSessionProfileIntent", "createSessionProfileResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="SESSION_PROFILE",
    action="CREATE",
    root_quorum_only=True,
)
