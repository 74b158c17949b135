"""What every chain module of ``sign_transaction`` provides, and the helpers they share.

A chain module turns ``unsignedTransaction`` into a :class:`ChainTransaction` with
``decode(text)``. Decoding, :meth:`ChainTransaction.accept` and
:meth:`ChainTransaction.policy_variables` need no key material, so the ingress runs them in
the activity's ``check`` (a malformed transaction is a 400 before anything is stored) and the
policy engine runs them to build the condition variables; only :meth:`ChainTransaction.sign`
runs in an executor.
"""

from __future__ import annotations

from typing import Any, Protocol

from infra.crypto.addresses import AddressFormat, Curve
from infra.errors import InvalidRequest
from infra.wallets.store import Signer

__all__ = ["FIELD", "SIGN_WITH", "ChainTransaction", "InvalidTransaction", "Signer",
           "decode_hex", "require_curve", "require_formats"]

FIELD = "parameters.unsignedTransaction"
SIGN_WITH = "parameters.signWith"


class InvalidTransaction(InvalidRequest):
    """The unsigned transaction cannot be decoded or signed as sent (400, ``INVALID_TRANSACTION``)."""

    code = "invalid_transaction"
    turnkey_code = "INVALID_TRANSACTION"


class ChainTransaction(Protocol):
    """A decoded unsigned transaction of one chain."""

    def accept(self, signer: Signer) -> None:
        """Raise :class:`InvalidRequest` unless ``signer`` can sign this transaction."""

    def policy_variables(self, signer: Signer | None) -> dict[str, Any]:
        """The chain's condition variables, e.g. ``{"eth": {"tx": {...}}}`` (PROTOCOL.md §8.3)."""

    def sign(self, private_key_secret: bytes, signer: Signer) -> str:
        """The signed transaction as Turnkey returns it (``signedTransaction``)."""


def decode_hex(text: str, what: str) -> bytes:
    """Bytes of a hex string (``0x`` optional); ``what`` names the expected content."""
    body = text[2:] if text[:2] in ("0x", "0X") else text
    try:
        raw = bytes.fromhex(body)
    except ValueError:
        raise InvalidTransaction(
            f"unsignedTransaction must be hex: send {what} as an even number of hex digits",
            field=FIELD,
        ) from None
    if not raw:
        raise InvalidTransaction(f"unsignedTransaction is empty; send {what} as hex", field=FIELD)
    return raw


def require_curve(signer: Signer, curve: Curve, chain: str, transaction_type: str) -> None:
    """Refuse a signer on another curve, naming what would work."""
    if signer.curve is not curve:
        raise InvalidRequest(
            f"signWith is a {signer.curve.value} key and cannot sign {chain} transactions "
            f"({transaction_type}); send a {curve.value} wallet account or private key of {chain}",
            field=SIGN_WITH,
        )


def require_formats(
    signer: Signer, formats: frozenset[AddressFormat], chain: str, transaction_type: str
) -> None:
    """Refuse a wallet account whose address belongs to another chain.

    Private keys (resolved by id, ``address_format`` ``None``) sign for every chain of their
    curve, as their addresses are all derived from the one key.
    """
    fmt = signer.address_format
    if signer.is_account and fmt is not None and fmt not in formats:
        raise InvalidRequest(
            f"signWith is an {fmt.value} account, which is not an account of {chain}; sign "
            f"{transaction_type} with an account of {', '.join(sorted(f.value for f in formats))} "
            "or with a private key",
            field=SIGN_WITH,
        )
