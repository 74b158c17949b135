"""``stamp_login``: the stamping credential's user gets a session (JWT + login credential).

Stamped by any credential of the user (API key, passkey, ``X-Stamp-Attested`` verification
token). Addressed to a parent organization, the user's sub-organization is resolved from the
credential (PROTOCOL.md §6) and the session names it.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import User
from infra.errors import NotFound
from infra.messaging import queues
from infra.sessions.params import seconds, timestamp_name
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    issue_session_jwt,
    login_grant,
    p256_public_key,
)
from infra.wiremodel import WireModel
from infra.worker_services import service_keys


class Params(WireModel):
    """``v1StampLoginIntent``."""

    public_key: str
    expiration_seconds: str | None = None
    invalidate_existing: bool = False
    session_profile_id: str | None = None


def check(params: Params, ctx: CheckContext) -> None:
    p256_public_key(params.public_key, "publicKey")
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user = ctx.session.get(User, ctx.user_id) if ctx.user_id else None
    if user is None:
        raise NotFound("the stamping user no longer exists")
    public_key = p256_public_key(params.public_key, "publicKey")
    # The stamping session's profile and bound, or the one named (infra.access.issuance).
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    grant = login_grant(ctx, user_id=user.id, organization_id=user.organization_id,
                        public_key_hex=public_key, seconds=ttl,
                        named_profile_id=params.session_profile_id)
    ttl = grant.lifetime(ttl)
    add_login_credential(ctx, user_id=user.id, public_key_hex=public_key, expiration_seconds=ttl,
                         invalidate_existing=params.invalidate_existing,
                         name=timestamp_name("Login", ctx.now), grant=grant)
    profile = grant.profile
    token = issue_session_jwt(service_keys(ctx.services), user_id=user.id,
                              organization_id=user.organization_id, public_key_hex=public_key,
                              session_type=profile.name if profile else "SESSION_TYPE_READ_WRITE",
                              expiration_seconds=ttl, now=ctx.now, session=ctx.session,
                              session_profile_id=grant.profile_id)
    return {"session": token}


SPEC = ActivitySpec(
    path="stamp_login",
    versions=(Version("ACTIVITY_TYPE_STAMP_LOGIN", Params, "stampLoginIntent",
                      "stampLoginResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="AUTH",
    action="CREATE",
    extra={"login": True},
)
