"""``create_private_keys``: standalone keys, so ``signWith`` can name a private key."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto.addresses import derive_address, parse_address_format, parse_curve
from infra.crypto.signing import generate_private_key
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of

_PROBE = {
    "CURVE_SECP256K1": bytes.fromhex(
        "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"),
    "CURVE_ED25519": bytes.fromhex(
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"),
}


class Params(WireModel):
    """``v1CreatePrivateKeysIntentV2``."""

    private_keys: list[store.PrivateKeyParams] = Field(min_length=1)


def validate_key_params(keys: list[store.PrivateKeyParams]) -> None:
    """Curves and address formats of new keys (fast 400s).

    A key has one address per format: a format named twice is refused here, before the
    key's address rows would collide when stored.
    """
    for i, key in enumerate(keys):
        curve = parse_curve(key.curve, field=f"privateKeys[{i}].curve")
        if curve.value not in _PROBE:
            raise InvalidRequest("private keys use CURVE_SECP256K1 or CURVE_ED25519",
                                 field=f"privateKeys[{i}].curve")
        seen: set[str] = set()
        for fmt in key.address_formats:
            if fmt in seen:
                raise InvalidRequest(
                    f"address format {fmt} is listed twice; name each format once",
                    field=f"privateKeys[{i}].addressFormats")
            seen.add(fmt)
            derive_address(curve, parse_address_format(fmt, field=f"privateKeys[{i}]"),
                           _PROBE[curve.value])


def check(params: Params, ctx: CheckContext) -> None:
    validate_key_params(params.private_keys)
    store.check_private_key_limit(ctx.session, ctx.organization_id, len(params.private_keys))


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    validate_key_params(params.private_keys)
    store.check_private_key_limit(ctx.session, ctx.organization_id, len(params.private_keys))
    custody = custody_of(ctx.services)
    keys = [
        store.create_private_key(ctx.session, custody, ctx.organization_id, p,
                                 generate_private_key(parse_curve(p.curve)))
        for p in params.private_keys
    ]
    if ctx.version.result_key == "createPrivateKeysResult":
        return {"privateKeyIds": [k.id for k in keys]}
    return {"privateKeys": [{"privateKeyId": k.id, "addresses": list(k.addresses)}
                            for k in keys]}


SPEC = ActivitySpec(
    path="create_private_keys",
    versions=(
        Version("ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", Params, "createPrivateKeysIntentV2",
                "createPrivateKeysResultV2"),
        Version("ACTIVITY_TYPE_CREATE_PRIVATE_KEYS", Params, "createPrivateKeysIntent",
                "createPrivateKeysResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="CREATE",
)
