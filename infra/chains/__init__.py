"""Chains ``sign_transaction`` signs for: one module per chain, one table by transaction type.

``decode(transaction_type, unsigned_transaction)`` picks the chain's decoder; the decoded
:class:`~infra.chains.base.ChainTransaction` checks the signer, shows itself to policies and
signs (see :mod:`infra.chains.base`).
"""

from __future__ import annotations

from collections.abc import Callable

from infra.chains import bitcoin, ethereum, solana, tron
from infra.chains.base import ChainTransaction, InvalidTransaction
from infra.errors import InvalidRequest

__all__ = ["DECODERS", "ChainTransaction", "InvalidTransaction", "UnsupportedTransactionType",
           "decode"]

DECODERS: dict[str, Callable[[str], ChainTransaction]] = {
    ethereum.TRANSACTION_TYPE: ethereum.decode,
    solana.TRANSACTION_TYPE: solana.decode,
    tron.TRANSACTION_TYPE: tron.decode,
    bitcoin.TRANSACTION_TYPE: bitcoin.decode,
}


class UnsupportedTransactionType(InvalidRequest):
    """A transaction type walletd does not sign (400)."""

    code = "unsupported_transaction_type"
    turnkey_code = "UNSUPPORTED_TRANSACTION_TYPE"


def decode(transaction_type: str, unsigned_transaction: str) -> ChainTransaction:
    """Decode ``unsignedTransaction`` of ``type``.

    Raises:
        UnsupportedTransactionType: a type without a chain module (``TRANSACTION_TYPE_TEMPO``).
        InvalidTransaction: the transaction does not decode.
    """
    decoder = DECODERS.get(transaction_type)
    if decoder is None:
        raise UnsupportedTransactionType(
            f"{transaction_type} is not supported; send one of {', '.join(DECODERS)}",
            field="parameters.type",
        )
    return decoder(unsigned_transaction)
