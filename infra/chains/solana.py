"""Solana transactions (``TRANSACTION_TYPE_SOLANA``): decode, show to policies, sign.

``unsignedTransaction`` is the hex of a serialized transaction, as ``@turnkey/solana`` sends
it (``tx.serialize({requireAllSignatures: false})`` of a legacy ``Transaction`` or
``VersionedTransaction.serialize()``): the compact array of signature slots followed by a
legacy or v0 message (with address lookup tables). Decoding uses ``solders``. The signer must
be one of the message's required signers; its ed25519 signature over the message bytes is
placed in its slot and every other slot is kept as sent. The answer is the whole signed
transaction as hex, which ``@turnkey/solana`` deserializes.

Policies see ``solana.tx{account_keys, program_keys, instructions, transfers, spl_transfers,
recent_blockhash, address_table_lookups}`` (PROTOCOL.md §8.3). Accounts loaded from an address
lookup table cannot be resolved without the chain; they appear as ``""`` so an allow-list on
transfer recipients never matches them by accident.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nacl.signing
from solders.message import Message, MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from infra.chains.base import (
    FIELD,
    SIGN_WITH,
    InvalidTransaction,
    Signer,
    decode_hex,
    require_curve,
)
from infra.crypto.addresses import Curve
from infra.errors import InvalidRequest

TRANSACTION_TYPE = "TRANSACTION_TYPE_SOLANA"
SYSTEM_PROGRAM = "11111111111111111111111111111111"
TOKEN_PROGRAMS = frozenset(
    {"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "TokenzQdBNbLqP5VEhdkAtS8H3jRrr8DnjLx7wNVHuX"}
)
_SYSTEM_TRANSFER = 2
_SPL_TRANSFER, _SPL_TRANSFER_CHECKED = 3, 12
_UNRESOLVED = ""


@dataclass(frozen=True)
class _Account:
    key: str
    signer: bool
    writable: bool


def _static_accounts(message: Message | MessageV0) -> list[_Account]:
    header = message.header
    keys = [str(k) for k in message.account_keys]
    signed, ro_signed, ro_unsigned = (header.num_required_signatures,
                                      header.num_readonly_signed_accounts,
                                      header.num_readonly_unsigned_accounts)
    return [
        _Account(key, i < signed,
                 i < signed - ro_signed if i < signed else i < len(keys) - ro_unsigned)
        for i, key in enumerate(keys)
    ]


def _loaded_accounts(message: Message | MessageV0) -> list[tuple[_Account, str, bool, int]]:
    """Lookup-table accounts in message order: (account, table, writable, index in table)."""
    if not isinstance(message, MessageV0):
        return []
    lookups = message.address_table_lookups
    writable = [(str(t.account_key), True, i) for t in lookups for i in t.writable_indexes]
    readonly = [(str(t.account_key), False, i) for t in lookups for i in t.readonly_indexes]
    return [(_Account(_UNRESOLVED, False, w), table, w, i) for table, w, i in writable + readonly]


def _u64(data: bytes, offset: int) -> int:
    return int.from_bytes(data[offset:offset + 8], "little")


@dataclass(frozen=True)
class SolanaTransaction:
    """A decoded Solana transaction (signature slots and message)."""

    transaction: VersionedTransaction

    @property
    def message(self) -> Message | MessageV0:
        """The legacy or v0 message."""
        return self.transaction.message  # type: ignore[return-value]

    def signer_index(self, public_key: bytes) -> int:
        """The signature slot of ``public_key``; raises when it is not a required signer."""
        signers = list(self.message.account_keys)[: self.message.header.num_required_signatures]
        key = Pubkey.from_bytes(public_key)
        if key not in signers:
            raise InvalidRequest(
                f"signWith ({key}) is not a signer of this Solana transaction; its signers "
                f"are {', '.join(str(s) for s in signers)}. Sign with one of them, or set it as "
                "the fee payer or an instruction signer",
                field=SIGN_WITH,
            )
        return signers.index(key)

    def accept(self, signer: Signer) -> None:
        """An ed25519 key that is one of the message's required signers."""
        require_curve(signer, Curve.ED25519, "Solana", TRANSACTION_TYPE)
        self.signer_index(signer.public_key)

    def sign(self, private_key_secret: bytes, signer: Signer) -> str:
        """The transaction with the signer's slot filled, hex (as Turnkey returns it)."""
        index = self.signer_index(signer.public_key)
        message_bytes = to_bytes_versioned(self.message)
        raw = nacl.signing.SigningKey(private_key_secret).sign(message_bytes).signature
        signatures = list(self.transaction.signatures)
        signatures[index] = Signature.from_bytes(raw)
        signed = VersionedTransaction.populate(self.message, signatures)
        return bytes(signed).hex()

    # --- policy view ------------------------------------------------------------------

    def policy_variables(self, signer: Signer | None) -> dict[str, Any]:
        """``{"solana": {"tx": {...}}}``."""
        return {"solana": {"tx": self.policy_view()}}

    def policy_view(self) -> dict[str, Any]:
        """``solana.tx`` (PROTOCOL.md §8.3)."""
        message = self.message
        static = _static_accounts(message)
        loaded = _loaded_accounts(message)
        accounts = static + [entry[0] for entry in loaded]
        instructions, transfers, spl_transfers, programs = [], [], [], []
        for ix in message.instructions:
            program = accounts[ix.program_id_index].key
            if program not in programs:
                programs.append(program)
            indexes = list(bytes(ix.accounts))
            used = [accounts[i] for i in indexes]
            data = bytes(ix.data)
            lookups: dict[str, dict[str, Any]] = {}
            for i in indexes:
                if i >= len(static):
                    _, table, writable, position = loaded[i - len(static)]
                    entry = lookups.setdefault(table, {"address_table_key": table,
                                                       "writable_indexes": [],
                                                       "readonly_indexes": []})
                    entry["writable_indexes" if writable else "readonly_indexes"].append(position)
            instructions.append({
                "program_key": program,
                "accounts": [{"account_key": a.key, "signer": a.signer, "writable": a.writable}
                             for a in used],
                "instruction_data_hex": data.hex(),
                "address_table_lookups": list(lookups.values()),
            })  # fmt: skip
            keys = [a.key for a in used]
            if program == SYSTEM_PROGRAM and len(data) >= 12 and len(keys) >= 2 and (
                int.from_bytes(data[:4], "little") == _SYSTEM_TRANSFER
            ):
                transfers.append({"from": keys[0], "to": keys[1], "amount": _u64(data, 4)})
            elif program in TOKEN_PROGRAMS and data:
                spl = _spl_transfer(data, keys)
                if spl is not None:
                    spl_transfers.append(spl)
        return {
            "account_keys": [a.key for a in static],
            "program_keys": programs,
            "instructions": instructions,
            "transfers": transfers,
            "spl_transfers": spl_transfers,
            "recent_blockhash": str(message.recent_blockhash),
            "address_table_lookups": [
                {"address_table_key": str(t.account_key),
                 "writable_indexes": list(bytes(t.writable_indexes)),
                 "readonly_indexes": list(bytes(t.readonly_indexes))}
                for t in (message.address_table_lookups if isinstance(message, MessageV0) else [])
            ],
        }  # fmt: skip


def _spl_transfer(data: bytes, keys: list[str]) -> dict[str, Any] | None:
    """An SPL Token ``Transfer`` or ``TransferChecked`` as ``solana.tx.spl_transfers`` shows it."""
    if data[0] == _SPL_TRANSFER and len(data) >= 9 and len(keys) >= 3:
        source, dest, owner, signers, mint = keys[0], keys[1], keys[2], keys[3:], ""
    elif data[0] == _SPL_TRANSFER_CHECKED and len(data) >= 10 and len(keys) >= 4:
        source, mint, dest, owner, signers = keys[0], keys[1], keys[2], keys[3], keys[4:]
    else:
        return None
    return {"from": source, "to": dest, "amount": _u64(data, 1), "owner": owner,
            "signers": signers, "token_mint": mint}


def decode(text: str) -> SolanaTransaction:
    """Decode ``unsignedTransaction``; raises :class:`InvalidTransaction`."""
    raw = decode_hex(text, "the serialized Solana transaction (signature slots and message)")
    try:
        tx = VersionedTransaction.from_bytes(raw)
    except Exception:  # solders raises ValueError or its own errors for malformed input
        raise InvalidTransaction(
            "unsignedTransaction is not a serialized Solana transaction; send "
            "tx.serialize({requireAllSignatures: false}) (legacy) or "
            "VersionedTransaction.serialize() as hex, as @turnkey/solana does",
            field=FIELD,
        ) from None
    if bytes(tx) != raw:
        raise InvalidTransaction("unsignedTransaction has trailing bytes after the message",
                                 field=FIELD)
    message = tx.message
    if not isinstance(message, Message | MessageV0):
        raise InvalidTransaction("only legacy and v0 Solana messages are supported", field=FIELD)
    if len(tx.signatures) != message.header.num_required_signatures:
        raise InvalidTransaction(
            f"the transaction has {len(tx.signatures)} signature slots but its message needs "
            f"{message.header.num_required_signatures}; serialize it with every slot",
            field=FIELD,
        )
    try:
        tx.sanitize()
    except Exception:
        raise InvalidTransaction("the Solana message is malformed (account indexes out of range "
                                 "or an inconsistent header)", field=FIELD) from None
    return SolanaTransaction(tx)
