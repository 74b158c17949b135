"""``import_private_key``: decrypt a raw private key sealed to the import target and store it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.common import user_in_org
from infra.activities.create_private_keys import validate_key_params
from infra.activities.import_wallet import import_target
from infra.activities.init_import_private_key import KIND
from infra.activities.init_import_wallet import own_user
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import bundles, hpke
from infra.crypto.addresses import Curve, parse_curve
from infra.crypto.signing import public_key_from_private
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1ImportPrivateKeyIntent``."""

    user_id: str
    private_key_name: str = Field(max_length=256)
    encrypted_bundle: str
    curve: str
    address_formats: list[str] = Field(default_factory=list)

    def key_params(self) -> store.PrivateKeyParams:
        # Validated from the wire names, so a refusal names the field the caller sent.
        return store.PrivateKeyParams.model_validate(
            {"privateKeyName": self.private_key_name, "curve": self.curve,
             "privateKeyTags": [], "addressFormats": self.address_formats})


def raw_private_key(plaintext: bytes, curve: Curve) -> bytes:
    """The 32-byte key from an import plaintext (a 64-byte ed25519 keypair is accepted)."""
    if curve is Curve.ED25519 and len(plaintext) == 64:
        if public_key_from_private(curve, plaintext[:32]) != plaintext[32:]:
            raise InvalidRequest("the 64-byte ed25519 keypair's halves do not match",
                                 field="encryptedBundle")
        return plaintext[:32]
    if len(plaintext) != 32:
        raise InvalidRequest(
            f"the decrypted private key is {len(plaintext)} bytes; encrypt the raw 32-byte key",
            field="encryptedBundle",
        )
    return plaintext


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)
    validate_key_params([params.key_params()])
    import_target(ctx.session, ctx.organization_id, params.user_id, KIND, "init_import_private_key")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)
    key_params = params.key_params()
    validate_key_params([key_params])
    store.check_private_key_limit(ctx.session, ctx.organization_id, 1)
    custody = custody_of(ctx.services)
    target = import_target(ctx.session, ctx.organization_id, params.user_id, KIND,
                           "init_import_private_key")
    target_key = hpke.private_key_from_bytes(custody.open_row(target))
    plaintext = bundles.open_encrypted_bundle(params.encrypted_bundle, target_key)
    private_secret = raw_private_key(plaintext, parse_curve(params.curve))
    key = store.create_private_key(ctx.session, custody, ctx.organization_id, key_params,
                                   private_secret, imported=True)
    ctx.session.delete(target)
    return {"privateKeyId": key.id, "addresses": list(key.addresses)}


SPEC = ActivitySpec(
    path="import_private_key",
    versions=(Version("ACTIVITY_TYPE_IMPORT_PRIVATE_KEY", Params, "importPrivateKeyIntent",
                      "importPrivateKeyResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="IMPORT",
)
