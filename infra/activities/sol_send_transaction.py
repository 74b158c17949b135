"""``sol_send_transaction``: sign a Solana transaction and broadcast it (V1 and V2).

V1 (``ACTIVITY_TYPE_SOL_SEND_TRANSACTION``): a base64 transaction and one ``signWith``; V2
(``..._V2``): a hex transaction and ``signWiths``, each signed in its slot. walletd runs no fee
sponsor, so ``sponsor: true`` is a clear 400. Blockhash, signing and following:
``infra.broadcast.sol_send`` and ``infra.broadcast.solana``.
"""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.broadcast import sol_send
from infra.errors import InvalidRequest
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1SolSendTransactionIntent``."""

    unsigned_transaction: str
    sign_with: str
    caip2: str
    sponsor: bool | None = None
    recent_blockhash: str | None = None

    def signers(self) -> list[str]:
        return [self.sign_with]


class ParamsV2(WireModel):
    """``v1SolSendTransactionIntentV2``."""

    unsigned_transaction: str
    sign_withs: list[str]
    caip2: str
    sponsor: bool | None = None
    recent_blockhash: str | None = None

    def signers(self) -> list[str]:
        return list(self.sign_withs)


def _refuse_sponsor(params: Params | ParamsV2) -> None:
    if params.sponsor:
        raise InvalidRequest("sponsor: true needs a fee sponsor, which walletd does not run; "
                             "send sponsor: false (the fee payer signs and pays)", field="sponsor")


def check(params: Params | ParamsV2, ctx: CheckContext) -> None:
    _refuse_sponsor(params)
    sol_send.check_caip2(params.caip2)
    sol_send.check_signers(params.signers())
    tx = sol_send.decode(params.unsigned_transaction, base64_encoded=isinstance(params, Params))
    for sign_with in params.signers():
        tx.accept(store.signer(ctx.session, ctx.organization_id, sign_with))


def execute(params: Params | ParamsV2, ctx: ActivityContext) -> dict[str, Any]:
    _refuse_sponsor(params)
    status_id = sol_send.send(ctx, caip2=params.caip2, unsigned=params.unsigned_transaction,
                              base64_encoded=isinstance(params, Params),
                              sign_withs=params.signers(),
                              recent_blockhash=params.recent_blockhash)
    return {"sendTransactionStatusId": status_id}


SPEC = ActivitySpec(
    path="sol_send_transaction",
    versions=(
        Version("ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2", ParamsV2, "solSendTransactionIntentV2",
                "solSendTransactionResultV2"),
        Version("ACTIVITY_TYPE_SOL_SEND_TRANSACTION", Params, "solSendTransactionIntent",
                "solSendTransactionResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.SIGNING,
    resource="PRIVATE_KEY",
    action="SIGN",
)
