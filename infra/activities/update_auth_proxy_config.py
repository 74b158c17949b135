"""``update_auth_proxy_config``: change the auth proxy's settings (root quorum only).

Every field of ``v1UpdateAuthProxyConfigIntent`` that is sent replaces the stored one;
fields left out keep their value. The proxy sees the change once its cached copy
(``WALLETD_AUTH_PROXY_CONFIG_TTL_S``) is older than the new version.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.authproxy.config import UpdateParams, config_of, updated
from infra.errors import InvalidRequest
from infra.messaging import queues


def check(params: UpdateParams, ctx: CheckContext) -> None:
    config_of(ctx.session, ctx.organization_id)


def execute(params: UpdateParams, ctx: ActivityContext) -> dict[str, Any]:
    if params.captcha_enabled and not ctx.services.settings.captcha_verify_url:
        raise InvalidRequest("captchaEnabled needs a captcha verifier: set "
                             "WALLETD_CAPTCHA_VERIFY_URL and WALLETD_CAPTCHA_SECRET (hCaptcha or "
                             "Turnstile siteverify) on the server first",
                             field="parameters.captchaEnabled")
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
