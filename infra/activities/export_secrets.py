"""``export_secrets``: each secret HPKE-sealed to the requester's key, in a signed bundle.

Each ``secretPayloads`` entry is what ``@turnkey/crypto``'s ``decryptSecretBundle`` opens:
the signed bundle whose data is ``{organizationId, encappedPublic, ciphertext}``.
Policies see the exported rows as the ``secrets`` condition variable.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import bundles, hpke
from infra.messaging import queues
from infra.secrets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class SecretParams(WireModel):
    """``v1ExportSecretParams``."""

    secret_id: str
    target_public_key: str
    encryption_suite: str


class Params(WireModel):
    """``v1ExportSecretsIntent``."""

    secrets: list[SecretParams]


def _validated(params: Params) -> None:
    store.check_count(len(params.secrets), "secrets")
    for index, secret in enumerate(params.secrets):
        store.check_suite(secret.encryption_suite, f"secrets[{index}].encryptionSuite")
        store.target_public_hex(secret.target_public_key, f"secrets[{index}].targetPublicKey")


def check(params: Params, ctx: CheckContext) -> None:
    _validated(params)
    store.secrets_in_org(ctx.session, ctx.organization_id, [s.secret_id for s in params.secrets])


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validated(params)
    custody = custody_of(ctx.services)
    rows = store.secrets_in_org(ctx.session, ctx.organization_id,
                                [s.secret_id for s in params.secrets])
    signer = custody.signer()
    payloads = [
        bundles.build_export_bundle(signer, organization_id=ctx.organization_id,
                                    plaintext=custody.open_row(row),
                                    target_public_key=hpke.uncompressed(
                                        hpke.load_public_key(secret.target_public_key)).hex())
        for secret, row in zip(params.secrets, rows, strict=True)
    ]
    return {"secretPayloads": payloads}


SPEC = ActivitySpec(
    path="export_secrets",
    versions=(Version("ACTIVITY_TYPE_EXPORT_SECRETS", Params, "exportSecretsIntent",
                      "exportSecretsResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="SECRET",
    action="EXPORT",
)
