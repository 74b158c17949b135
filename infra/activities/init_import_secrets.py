"""``init_import_secrets``: one signed, one-use HPKE target per secret to import.

Not in the reference swagger, but sent by ``@turnkey/core`` and ``@turnkey/http``
(``v1InitImportSecretsIntent {encryptionSuite, numSecrets}`` →
``v1InitImportSecretsResult {enclaveTargetMessages}``).
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.errors import PermissionDenied
from infra.messaging import queues
from infra.secrets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1InitImportSecretsIntent``."""

    encryption_suite: str
    num_secrets: int


def _check(params: Params, user_id: str | None) -> None:
    store.check_suite(params.encryption_suite, "encryptionSuite")
    store.check_count(params.num_secrets, "numSecrets")
    if not user_id:
        raise PermissionDenied("import targets belong to a user; stamp with a user's credential")


def check(params: Params, ctx: CheckContext) -> None:
    _check(params, ctx.user_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _check(params, ctx.user_id)
    assert ctx.user_id is not None
    messages = store.new_targets(ctx.session, custody_of(ctx.services),
                                 organization_id=ctx.organization_id, user_id=ctx.user_id,
                                 count=params.num_secrets, now=ctx.now)
    return {"enclaveTargetMessages": messages}


SPEC = ActivitySpec(
    path="init_import_secrets",
    versions=(Version("ACTIVITY_TYPE_INIT_IMPORT_SECRETS", Params, "initImportSecretsIntent",
                      "initImportSecretsResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="SECRET",
    action="IMPORT",
)
