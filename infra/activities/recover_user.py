"""``recover_user``: add a passkey to a user who lost access (after email recovery)."""

from __future__ import annotations

from typing import Any

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.auth.webauthn import verify_registration
from infra.identity.passkeys import add_authenticator, allowed_origins
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1RecoverUserIntent``."""

    authenticator: dict[str, Any]
    user_id: str


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    verify_registration(
        params.authenticator, allowed_origins=allowed_origins(ctx.session, ctx.organization_id)
    )


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    row = add_authenticator(
        ctx.session,
        ctx.organization_id,
        params.user_id,
        params.authenticator,
        ctx.now,
        "parameters.authenticator",
    )
    return {"authenticatorId": [row.id]}


SPEC = ActivitySpec(
    path="recover_user",
    versions=(Version("ACTIVITY_TYPE_RECOVER_USER", Params, "recoverUserIntent", "recoverUserResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="RECOVERY",
    action="CREATE",
)
