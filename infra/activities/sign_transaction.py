"""``sign_transaction``: sign an unsigned transaction with a wallet account or private key.

Ethereum, Solana, Tron and Bitcoin (``infra.chains``, one module each). The transaction is
decoded and the signer checked against it in ``check``, in the ingress before the activity is
stored, so a malformed transaction, the wrong chain for the account or a PSBT without an input
of the signer is a 400 and never reaches an executor; the executor decodes again and signs.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy.orm import Session

from infra import chains
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.chains.base import Signer
from infra.messaging import queues
from infra.wallets import store
from infra.wallets.custody import custody_of
from infra.wiremodel import WireModel

TransactionType = Literal[
    "TRANSACTION_TYPE_ETHEREUM", "TRANSACTION_TYPE_SOLANA", "TRANSACTION_TYPE_TRON",
    "TRANSACTION_TYPE_BITCOIN", "TRANSACTION_TYPE_TEMPO",
]  # fmt: skip


class Params(WireModel):
    """``v1SignTransactionIntentV2``."""

    sign_with: str
    unsigned_transaction: str
    type: TransactionType


def _prepare(
    params: Params, session: Session, organization_id: str
) -> tuple[store.SigningTarget, chains.ChainTransaction]:
    tx = chains.decode(params.type, params.unsigned_transaction)
    target = store.resolve_sign_with(session, organization_id, params.sign_with)
    tx.accept(Signer.of(target))
    return target, tx


def check(params: Params, ctx: CheckContext) -> None:
    _prepare(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    target, tx = _prepare(params, ctx.session, ctx.organization_id)
    key_secret = store.signing_secret(custody_of(ctx.services), target)
    return {"signedTransaction": tx.sign(key_secret, Signer.of(target))}


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
