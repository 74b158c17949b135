"""``sign_transaction``: sign an unsigned transaction with a wallet account or private key.

Ethereum, Solana, Tron and Bitcoin (``infra.chains``, one module each). The transaction is
decoded and the signer checked against it in ``check``, in the ingress before the activity is
stored, so a malformed transaction, the wrong chain for the account or a PSBT without an input
of the signer is a 400 and never reaches an executor; the executor decodes again and signs.
"""

from __future__ import annotations

from typing import Any, Literal

from infra import chains
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of

TransactionType = Literal[
    "TRANSACTION_TYPE_ETHEREUM", "TRANSACTION_TYPE_SOLANA", "TRANSACTION_TYPE_TRON",
    "TRANSACTION_TYPE_BITCOIN", "TRANSACTION_TYPE_TEMPO",
]  # fmt: skip


class Params(WireModel):
    """``v1SignTransactionIntentV2``."""

    sign_with: str
    unsigned_transaction: str
    type: TransactionType


def check(params: Params, ctx: CheckContext) -> None:
    tx = chains.decode(params.type, params.unsigned_transaction)
    tx.accept(store.signer(ctx.session, ctx.organization_id, params.sign_with))


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    tx = chains.decode(params.type, params.unsigned_transaction)
    target = store.resolve_sign_with(ctx.session, ctx.organization_id, params.sign_with)
    signer = store.Signer.of(target)
    tx.accept(signer)
    key_secret = store.signing_secret(custody_of(ctx.services), target)
    return {"signedTransaction": tx.sign(key_secret, signer)}


SPEC = ActivitySpec(
    path="sign_transaction",
    versions=(
        Version(
            "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", Params, "signTransactionIntentV2", "signTransactionResult"
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.SIGNING,
    resource="PRIVATE_KEY",
    action="SIGN",
)
