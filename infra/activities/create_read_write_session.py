"""``create_read_write_session`` (V1 by email, V2 by user id): a credential bundle session.

A fresh P-256 key becomes an expiring ``READ_WRITE_SESSION`` credential of the user; its
private half is HPKE-sealed to ``targetPublicKey`` (``decryptCredentialBundle`` opens it).
"""

from __future__ import annotations

from typing import Any

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.organizations import Organization, User
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.sessions.params import seconds, timestamp_name
from infra.sessions.tokens import (
    DEFAULT_SESSION_SECONDS,
    add_login_credential,
    credential_bundle,
    login_grant,
    new_session_key,
    resolve_login_user,
)
from infra.wiremodel import WireModel

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256"


class ParamsV1(WireModel):
    """``v1CreateReadWriteSessionIntent``."""

    target_public_key: str
    email: str
    api_key_name: str | None = None
    expiration_seconds: str | None = None
    #: Not in the swagger's intent: walletd honours it like the login activities do.
    session_profile_id: str | None = None


class Params(WireModel):
    """``v1CreateReadWriteSessionIntentV2``."""

    target_public_key: str
    user_id: str | None = None
    api_key_name: str | None = None
    expiration_seconds: str | None = None
    invalidate_existing: bool = False
    #: Not in the swagger's intent: walletd honours it like the login activities do.
    session_profile_id: str | None = None


def _user(params: ParamsV1 | Params, session: Any, organization_id: str,
          requester: str | None) -> User:
    if isinstance(params, ParamsV1):
        target = resolve_login_user(session, organization_id, email=params.email)
        user = session.get(User, target.user_id)
    else:
        user_id = params.user_id or requester
        if not user_id:
            raise InvalidRequest("userId is required", field="userId")
        user = user_in_org(session, organization_id, user_id)
    assert user is not None
    return user


def check(params: ParamsV1 | Params, ctx: CheckContext) -> None:
    seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    credential_bundle(params.target_public_key, b"\x01" * 32)  # a 400 for a bad target key
    _user(params, ctx.session, ctx.organization_id, ctx.user_id)


def execute(params: ParamsV1 | Params, ctx: ActivityContext) -> dict[str, Any]:
    user = _user(params, ctx.session, ctx.organization_id, ctx.user_id)
    public_key, private_key = new_session_key()
    # The stamping session's profile and bound, or the one named (infra.access.issuance).
    ttl = seconds(params.expiration_seconds, DEFAULT_SESSION_SECONDS)
    grant = login_grant(ctx, user_id=user.id, organization_id=user.organization_id,
                        public_key_hex=public_key, seconds=ttl,
                        named_profile_id=params.session_profile_id)
    key_id = add_login_credential(
        ctx, user_id=user.id, public_key_hex=public_key, expiration_seconds=grant.lifetime(ttl),
        invalidate_existing=getattr(params, "invalidate_existing", False),
        name=params.api_key_name or timestamp_name("Read Write Session", ctx.now),
        credential_type=CREDENTIAL_TYPE, grant=grant)
    org = ctx.session.get(Organization, user.organization_id)
    return {
        "organizationId": user.organization_id,
        "organizationName": org.name if org else "",
        "userId": user.id,
        "username": user.name,
        "apiKeyId": key_id,
        "credentialBundle": credential_bundle(params.target_public_key, private_key),
    }


SPEC = ActivitySpec(
    path="create_read_write_session",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2", Params,
                "createReadWriteSessionIntentV2", "createReadWriteSessionResultV2"),
        Version("ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION", ParamsV1,
                "createReadWriteSessionIntent", "createReadWriteSessionResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="AUTH",
    action="CREATE",
)
