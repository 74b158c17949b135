"""``update_auth_proxy_config``: change the auth proxy's settings (root quorum only).

Every field of ``v1UpdateAuthProxyConfigIntent`` that is sent replaces the stored one;
fields left out keep their value. The proxy sees the change once its cached copy
(``WALLETD_AUTH_PROXY_CONFIG_TTL_S``) is older than the new version.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.authproxy.config import UpdateParams, config_of, updated
from infra.messaging import queues


def check(params: UpdateParams, ctx: CheckContext) -> None:
    config_of(ctx.session, ctx.organization_id)


def execute(params: UpdateParams, ctx: ActivityContext) -> dict[str, Any]:
    row = config_of(ctx.session, ctx.organization_id)
    row.settings = updated(row.settings or {}, params)
    row.version += 1
    ctx.session.flush()
    return {"configId": row.id}


SPEC = ActivitySpec(
    path="update_auth_proxy_config",
    versions=(Version("ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", UpdateParams,
                      "updateAuthProxyConfigIntent", "updateAuthProxyConfigResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="AUTH_PROXY",
    action="UPDATE",
    root_quorum_only=True,
)
