"""``init_user_email_recovery`` (V1, V2): email a recovery credential bundle.

A fresh P-256 key becomes an expiring ``RECOVER_USER`` credential of the user named by
``email``, emailed sealed to ``targetPublicKey``; stamped with it, ``recover_user`` adds the
user's new passkey.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.sessions.credential_bundles import EmailBundleParams, check_email_bundle, email_bundle
from infra.sessions.params import timestamp_name

CREDENTIAL_TYPE = "CREDENTIAL_TYPE_RECOVER_USER_KEY_P256"


class Params(EmailBundleParams):
    """``v1InitUserEmailRecoveryIntent`` / ``V2``."""


def check(params: Params, ctx: CheckContext) -> None:
    check_email_bundle(params, ctx)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_id, _key_id = email_bundle(params, ctx, kind="recovery", credential_type=CREDENTIAL_TYPE,
                                    name=timestamp_name("Recovery", ctx.now),
                                    invalidate_existing=False)
    return {"userId": user_id}


SPEC = ActivitySpec(
    path="init_user_email_recovery",
    versions=(
        Version("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2", Params,
                "initUserEmailRecoveryIntentV2", "initUserEmailRecoveryResult"),
        Version("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY", Params,
                "initUserEmailRecoveryIntent", "initUserEmailRecoveryResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="RECOVERY",
    action="CREATE",
    parent_may_submit=True,
)
