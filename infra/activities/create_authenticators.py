"""``create_authenticators``: register passkeys on a user (attestation verified)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.auth.webauthn import verify_registration
from infra.identity.passkeys import add_authenticator, allowed_origins
from infra.messaging import queues
from infra.validation import caps
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreateAuthenticatorsIntentV2``."""

    authenticators: list[dict[str, Any]] = Field(min_length=1,
                                                  max_length=caps.CREDENTIALS_PER_USER)
    user_id: str


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    origins = allowed_origins(ctx.session, ctx.organization_id)
    for authenticator in params.authenticators:
        verify_registration(authenticator, allowed_origins=origins)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    ids = [
        add_authenticator(
            ctx.session, ctx.organization_id, params.user_id, a, ctx.now, f"parameters.authenticators[{i}]"
        ).id
        for i, a in enumerate(params.authenticators)
    ]
    return {"authenticatorIds": ids}


SPEC = ActivitySpec(
    path="create_authenticators",
    versions=(
        Version(
            "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
            Params,
            "createAuthenticatorsIntentV2",
            "createAuthenticatorsResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="CREDENTIAL",
    action="CREATE",
)
