"""``import_secrets``: open each secret with its one-use target key and store it sealed."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.errors import InvalidRequest, PermissionDenied
from infra.messaging import queues
from infra.secrets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class SecretParams(WireModel):
    """``v1ImportSecretParams``."""

    name: str | None = Field(default=None, min_length=1, max_length=256)
    secret_payload: str = Field(max_length=4 * store.MAX_SECRET_BYTES)
    target_public_key: str
    encryption_suite: str
    static_properties: list[store.KeyValue] = Field(default_factory=list)


class Params(WireModel):
    """``v1ImportSecretsIntent``."""

    secrets: list[SecretParams]


def _validated(params: Params, session: Session, organization_id: str,
               user_id: str | None) -> tuple[list[str], list[list[dict[str, str]]]]:
    """Target keys and properties of every secret, every bound checked before any work."""
    if not user_id:
        raise PermissionDenied("import targets belong to a user; stamp with a user's credential")
    store.check_count(len(params.secrets), "secrets")
    targets, properties = [], []
    for index, secret in enumerate(params.secrets):
        store.check_suite(secret.encryption_suite, f"secrets[{index}].encryptionSuite")
        targets.append(store.target_public_hex(secret.target_public_key,
                                               f"secrets[{index}].targetPublicKey"))
        properties.append(store.check_properties(secret.static_properties,
                                                 f"secrets[{index}].staticProperties"))
    if len(set(targets)) != len(targets):
        raise InvalidRequest("each import target takes one secret", field="secrets")
    store.check_names_free(session, organization_id, [s.name for s in params.secrets])
    return targets, properties


def check(params: Params, ctx: CheckContext) -> None:
    targets, _ = _validated(params, ctx.session, ctx.organization_id, ctx.user_id)
    store.targets_of(ctx.session, ctx.organization_id, ctx.user_id, targets)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    targets, properties = _validated(params, ctx.session, ctx.organization_id, ctx.user_id)
    assert ctx.user_id is not None
    custody = custody_of(ctx.services)
    pending = store.targets_of(ctx.session, ctx.organization_id, ctx.user_id, targets)
    ids = []
    for index, (secret, public) in enumerate(zip(params.secrets, targets, strict=True)):
        value = store.open_payload(custody, pending[public], secret.secret_payload,
                                   f"secrets[{index}].secretPayload")
        row = store.create_secret(ctx.session, custody, organization_id=ctx.organization_id,
                                  name=secret.name, properties=properties[index], value=value,
                                  now=ctx.now)
        ids.append(row.id)
    for public in targets:
        ctx.session.delete(pending[public])
    return {"secretIds": ids}


SPEC = ActivitySpec(
    path="import_secrets",
    versions=(Version("ACTIVITY_TYPE_IMPORT_SECRETS", Params, "importSecretsIntent",
                      "importSecretsResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="SECRET",
    action="IMPORT",
)
