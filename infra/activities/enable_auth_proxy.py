"""``enable_auth_proxy``: turn on the auth proxy, creating its user, key and policies (root quorum only).

The first enable creates the proxy user with a fresh P-256 API key whose private half is
sealed to the proxy key (``infra.authproxy.keys``) and installs the policies that confine
that user to sign-up, OTP, OAuth and login (``infra.authproxy.config.proxy_policies``).
Enabling again after ``disable_auth_proxy`` turns the same configuration back on.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.authproxy import keys
from infra.authproxy.config import proxy_policies
from infra.crypto import hpke
from infra.db.models.auth_proxy import AuthProxyConfig
from infra.db.models.organizations import User
from infra.identity.credentials import ApiKeyParams
from infra.identity.users import UserParams, create_user
from infra.messaging import queues
from infra.sessions.oidc_login import spend_signup
from infra.stored_policies import PolicyParams, add_policy, check_room
from infra.wiremodel import WireModel

USER_NAME = "Auth Proxy"


class Params(WireModel):
    """``v1EnableAuthProxyIntent`` (no fields)."""


def _create_proxy_user(ctx: ActivityContext) -> tuple[str, str, str]:
    """The proxy user, its key and policies: ``(user id, public key, sealed private key)``."""
    proxy_public = keys.public_key(ctx.services.settings)
    private = hpke.generate_private_key()
    public_hex = hpke.compressed(private.public_key()).hex()
    user = create_user(
        ctx.session, ctx.organization_id,
        UserParams(user_name=USER_NAME, api_keys=[ApiKeyParams(
            api_key_name="auth-proxy", public_key=public_hex, curve_type="API_KEY_CURVE_P256")]),
        ctx.now, on_oidc_token=spend_signup)
    policies = proxy_policies(user.id)
    check_room(ctx.session, ctx.organization_id, adding=len(policies))
    for policy in policies:
        add_policy(ctx.session, ctx.organization_id, PolicyParams.model_validate(policy))
    return user.id, public_hex, keys.seal_api_key(private, proxy_public)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = ctx.session.scalar(select(AuthProxyConfig).where(
        AuthProxyConfig.organization_id == ctx.organization_id))
    if row is not None and ctx.session.get(User, row.user_id) is not None:
        if not row.enabled:
            row.enabled = True
            row.version += 1
        return {"userId": row.user_id}
    user_id, public_hex, sealed = _create_proxy_user(ctx)
    if row is None:
        row = AuthProxyConfig(organization_id=ctx.organization_id, settings={}, version=0)
        ctx.session.add(row)
    row.enabled = True
    row.user_id = user_id
    row.api_public_key = public_hex
    row.api_private_key_sealed = sealed
    row.sealed_to = keys.public_key(ctx.services.settings)
    row.version = (row.version or 0) + 1
    ctx.session.flush()
    return {"userId": user_id}


SPEC = ActivitySpec(
    path="enable_auth_proxy",
    versions=(Version("ACTIVITY_TYPE_ENABLE_AUTH_PROXY", Params, "enableAuthProxyIntent",
                      "enableAuthProxyResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="AUTH_PROXY",
    action="CREATE",
    root_quorum_only=True,
)
