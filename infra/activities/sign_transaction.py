"""``sign_transaction``: sign an unsigned transaction with a wallet account or private key.

Only ``TRANSACTION_TYPE_ETHEREUM`` is supported (legacy, EIP-2930 and EIP-1559 envelopes);
the transaction is decoded before it is stored so policies can read it as ``eth.tx``.
"""

from __future__ import annotations

from typing import Any, Literal

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto.addresses import Curve
from infra.errors import InvalidRequest
from infra.ethereum import UnsignedTransaction, decode_unsigned_transaction
from infra.messaging import queues
from infra.wallets import store
from infra.wallets.custody import custody_of
from infra.wiremodel import WireModel

ETHEREUM = "TRANSACTION_TYPE_ETHEREUM"
TransactionType = Literal[
    "TRANSACTION_TYPE_ETHEREUM", "TRANSACTION_TYPE_SOLANA", "TRANSACTION_TYPE_TRON",
    "TRANSACTION_TYPE_BITCOIN", "TRANSACTION_TYPE_TEMPO",
]  # fmt: skip


class UnsupportedTransactionType(InvalidRequest):
    """A transaction type walletd does not sign yet (400)."""

    code = "unsupported_transaction_type"
    turnkey_code = "UNSUPPORTED_TRANSACTION_TYPE"


class Params(WireModel):
    """``v1SignTransactionIntentV2``."""

    sign_with: str
    unsigned_transaction: str
    type: TransactionType


def _prepare(
    params: Params, session: Any, organization_id: str
) -> tuple[store.SigningTarget, UnsignedTransaction]:
    if params.type != ETHEREUM:
        raise UnsupportedTransactionType(
            f"{params.type} is not supported; send TRANSACTION_TYPE_ETHEREUM", field="parameters.type"
        )
    tx = decode_unsigned_transaction(params.unsigned_transaction)
    target = store.resolve_sign_with(session, organization_id, params.sign_with)
    if target.curve != Curve.SECP256K1:
        raise InvalidRequest(
            f"signWith {params.sign_with!r} is a {target.curve} key; Ethereum transactions "
            "need a CURVE_SECP256K1 account or private key",
            field="parameters.signWith",
        )
    return target, tx


def check(params: Params, ctx: CheckContext) -> None:
    _prepare(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    target, tx = _prepare(params, ctx.session, ctx.organization_id)
    key_secret = store.signing_secret(custody_of(ctx.services), target)
    return {"signedTransaction": tx.sign(key_secret)}


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
