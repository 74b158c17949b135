"""``sign_raw_payloads``: sign several payloads with one key."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.sign_raw_payload import sign_payloads
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import signing
from infra.messaging import queues
from infra.validation import caps
from infra.wallets import store
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1SignRawPayloadsIntent``."""

    sign_with: str
    payloads: list[str] = Field(min_length=1, max_length=caps.PAYLOADS)
    encoding: str
    hash_function: str


def check(params: Params, ctx: CheckContext) -> None:
    curve, _ = store.signer_kind(ctx.session, ctx.organization_id, params.sign_with)
    for payload in params.payloads:
        signing.prepare_message(curve, payload, params.encoding, params.hash_function)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    return {"signatures": sign_payloads(ctx, params.sign_with, params.payloads,
                                        params.encoding, params.hash_function)}


SPEC = ActivitySpec(
    path="sign_raw_payloads",
    versions=(Version("ACTIVITY_TYPE_SIGN_RAW_PAYLOADS", Params, "signRawPayloadsIntent",
                      "signRawPayloadsResult"),),
    execute=execute,
    check=check,
    pool=queues.SIGNING,
    resource="PRIVATE_KEY",
    action="SIGN",
)
