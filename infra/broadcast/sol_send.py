"""What ``sol_send_transaction`` does inside its activity.

Decode the caller's transaction (``infra.chains.solana``), put in a recent blockhash when
asked (``recentBlockhash`` given, or the message's blockhash left all zeros: then the node's
latest), sign every ``signWith`` in its slot, and store the signed transaction for the tracker
(``infra.broadcast.solana``). The first signature is the transaction's id on chain.
"""

from __future__ import annotations

import base64

import base58
from solders.hash import Hash
from solders.message import Message, MessageV0
from solders.transaction import VersionedTransaction

from infra import chains
from infra.activities.spec import ActivityContext
from infra.broadcast import status
from infra.broadcast.rpc import ChainRpc, NodeUnavailable, chain
from infra.chains import solana as sol
from infra.errors import InvalidRequest
from infra.wallets import store
from infra.worker_services import custody_of

MAX_SIGNERS = 16
ZERO_BLOCKHASH = Hash.default()


def check_caip2(caip2: str) -> None:
    """A Solana CAIP-2 name (``solana:<genesis hash prefix>`` or an alias)."""
    if not caip2.startswith("solana:"):
        raise InvalidRequest(f"{caip2!r} is not a Solana chain (solana:<reference>)", field="caip2")


def check_signers(sign_withs: list[str]) -> None:
    if not 1 <= len(sign_withs) <= MAX_SIGNERS:
        raise InvalidRequest(f"signWiths must name between 1 and {MAX_SIGNERS} signers",
                             field="signWiths")
    if len(set(sign_withs)) != len(sign_withs):
        raise InvalidRequest("signWiths names a signer twice", field="signWiths")


def latest_blockhash(rpc: ChainRpc) -> Hash:
    answer = rpc.call("getLatestBlockhash", [{"commitment": "confirmed"}])
    try:
        return Hash.from_string(answer["value"]["blockhash"])
    except (KeyError, TypeError, ValueError):
        raise NodeUnavailable(f"the {rpc.caip2} node answered no usable blockhash") from None


def with_blockhash(tx: VersionedTransaction, blockhash: Hash) -> VersionedTransaction:
    """The same transaction over a message with ``blockhash`` (signature slots emptied)."""
    message = tx.message
    if isinstance(message, MessageV0):
        rebuilt: Message | MessageV0 = MessageV0(
            message.header, list(message.account_keys), blockhash, list(message.instructions),
            list(message.address_table_lookups))
    else:
        header = message.header
        rebuilt = Message.new_with_compiled_instructions(
            header.num_required_signatures, header.num_readonly_signed_accounts,
            header.num_readonly_unsigned_accounts, list(message.account_keys), blockhash,
            list(message.instructions))
    return VersionedTransaction.populate(rebuilt, list(tx.signatures))


def decode(unsigned: str, *, base64_encoded: bool) -> sol.SolanaTransaction:
    """The caller's transaction (V1 sends base64, V2 hex)."""
    if base64_encoded:
        try:
            unsigned = base64.b64decode(unsigned, validate=True).hex()
        except ValueError:
            raise InvalidRequest("unsignedTransaction must be base64", field="unsignedTransaction"
                                 ) from None
    return sol.decode(unsigned)


def send(ctx: ActivityContext, *, caip2: str, unsigned: str, base64_encoded: bool,
         sign_withs: list[str], recent_blockhash: str | None) -> str:
    """Sign and store one Solana send; its ``sendTransactionStatusId``."""
    check_caip2(caip2)
    check_signers(sign_withs)
    rpc = chain(ctx.services.settings, caip2)
    tx = decode(unsigned, base64_encoded=base64_encoded).transaction
    if recent_blockhash:
        try:
            tx = with_blockhash(tx, Hash.from_string(recent_blockhash))
        except ValueError:
            raise InvalidRequest("recentBlockhash must be a base58 blockhash",
                                 field="recentBlockhash") from None
    elif tx.message.recent_blockhash == ZERO_BLOCKHASH:
        tx = with_blockhash(tx, latest_blockhash(rpc))
    custody = custody_of(ctx.services)
    signed_hex = bytes(tx).hex()
    for sign_with in sign_withs:
        target = store.resolve_sign_with(ctx.session, ctx.organization_id, sign_with)
        signer = store.Signer.of(target)
        decoded = chains.decode(sol.TRANSACTION_TYPE, signed_hex)
        decoded.accept(signer)
        signed_hex = decoded.sign(store.signing_secret(custody, target), signer)
    signed = VersionedTransaction.from_bytes(bytes.fromhex(signed_hex))
    signature = base58.b58encode(bytes(signed.signatures[0])).decode()
    row = status.create(
        ctx.uow, organization_id=ctx.organization_id, activity_id=ctx.activity.id,
        caip2=caip2, chain="solana", sender=sign_withs[0], nonce=None,
        unsigned={"blockhash": str(signed.message.recent_blockhash)},
        raw=base64.b64encode(bytes(signed)).decode(), tx_hash=signature, now=ctx.now)
    return row.id
