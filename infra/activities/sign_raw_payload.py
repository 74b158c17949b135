"""``sign_raw_payload``: sign one payload with a wallet account or private key."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import signing
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1SignRawPayloadIntentV2``."""

    sign_with: str
    payload: str
    encoding: str
    hash_function: str


def check(params: Params, ctx: CheckContext) -> None:
    curve, _ = store.signer_kind(ctx.session, ctx.organization_id, params.sign_with)
    signing.prepare_message(curve, params.payload, params.encoding, params.hash_function)


def sign_payloads(
    ctx: ActivityContext, sign_with: str, payloads: list[str], encoding: str, hash_function: str
) -> list[dict[str, str]]:
    """Validate every payload, then sign them all with the key ``sign_with`` names."""
    target = store.resolve_sign_with(ctx.session, ctx.organization_id, sign_with)
    for payload in payloads:
        signing.prepare_message(target.curve, payload, encoding, hash_function)
    key_secret = store.signing_secret(custody_of(ctx.services), target)
    return [
        signing.sign_raw_payload(target.curve, key_secret, payload, encoding, hash_function,
                                 address_format=target.address_format).to_wire()
        for payload in payloads
    ]


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    return sign_payloads(ctx, params.sign_with, [params.payload], params.encoding,
                         params.hash_function)[0]


SPEC = ActivitySpec(
    path="sign_raw_payload",
    versions=(
        Version("ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", Params, "signRawPayloadIntentV2",
                "signRawPayloadResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.SIGNING,
    resource="PRIVATE_KEY",
    action="SIGN",
)
