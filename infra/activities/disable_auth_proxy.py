"""``disable_auth_proxy``: turn the auth proxy off (root quorum only).

The configuration, its user and key stay, so ``enable_auth_proxy`` turns the same
configuration back on; while off, the proxy refuses every request for it.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, Version
from infra.authproxy.config import config_of
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DisableAuthProxyIntent`` (no fields)."""


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    row = config_of(ctx.session, ctx.organization_id)
    if row.enabled:
        row.enabled = False
        row.version += 1
    return {}


SPEC = ActivitySpec(
    path="disable_auth_proxy",
    versions=(Version("ACTIVITY_TYPE_DISABLE_AUTH_PROXY", Params, "disableAuthProxyIntent",
                      "disableAuthProxyResult"),),
    execute=execute,
    pool=queues.ACCOUNTS,
    resource="AUTH_PROXY",
    action="DELETE",
    root_quorum_only=True,
)
