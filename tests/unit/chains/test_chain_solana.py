"""Solana transactions: legacy and v0 messages, the signer's slot, ``solana.tx``."""

from __future__ import annotations

import pytest
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from infra.chains.base import InvalidTransaction, Signer
from infra.chains.solana import TOKEN_PROGRAMS, decode
from infra.crypto.addresses import AddressFormat, Curve
from infra.errors import InvalidRequest

SEED = bytes(range(32))
SIGNER = Keypair.from_seed(SEED)
OTHER = Keypair.from_seed(bytes(32 * [7]))
TO = Pubkey.from_bytes(bytes(32 * [9]))
BLOCKHASH = Hash.from_bytes(bytes(32 * [3]))


def _target(keypair: Keypair = SIGNER, curve: Curve = Curve.ED25519) -> Signer:
    return Signer(curve, AddressFormat.SOLANA, True, bytes(keypair.pubkey()), str(keypair.pubkey()))


def _unsigned(message: Message | MessageV0) -> str:
    slots = [Signature.default()] * message.header.num_required_signatures
    return bytes(VersionedTransaction.populate(message, slots)).hex()


def _transfer(payer: Pubkey = SIGNER.pubkey()) -> Instruction:
    return transfer(TransferParams(from_pubkey=payer, to_pubkey=TO, lamports=1234))


def test_legacy_transfer_is_signed_in_the_signers_slot() -> None:
    message = Message.new_with_blockhash([_transfer()], SIGNER.pubkey(), BLOCKHASH)
    tx = decode(_unsigned(message))
    tx.accept(_target())
    signed = VersionedTransaction.from_bytes(bytes.fromhex(tx.sign(SEED, _target())))
    assert signed.message == message
    assert all(signed.verify_with_results())


def test_second_signer_keeps_the_first_signature() -> None:
    # OTHER pays the fee (slot 0) and has signed; SIGNER is the transfer's source (slot 1).
    message = Message.new_with_blockhash([_transfer()], OTHER.pubkey(), BLOCKHASH)
    first = OTHER.sign_message(bytes(message))
    unsigned = bytes(VersionedTransaction.populate(message, [first, Signature.default()])).hex()
    signed = VersionedTransaction.from_bytes(bytes.fromhex(decode(unsigned).sign(SEED, _target())))
    assert signed.signatures[0] == first
    assert all(signed.verify_with_results())


def test_v0_message_with_a_lookup_table_signs_and_shows_its_lookups() -> None:
    table_key = Pubkey.from_bytes(bytes(32 * [5]))
    table = AddressLookupTableAccount(table_key, [TO, Pubkey.from_bytes(bytes(32 * [6]))])
    message = MessageV0.try_compile(SIGNER.pubkey(), [_transfer()], [table], BLOCKHASH)
    tx = decode(_unsigned(message))
    signed = VersionedTransaction.from_bytes(bytes.fromhex(tx.sign(SEED, _target())))
    assert all(signed.verify_with_results())
    view = tx.policy_variables(_target())["solana"]["tx"]
    assert view["address_table_lookups"] == [
        {"address_table_key": str(table_key), "writable_indexes": [0], "readonly_indexes": []}]
    # The recipient comes from the table: unresolvable offline, shown as "".
    assert view["transfers"] == [{"from": str(SIGNER.pubkey()), "to": "", "amount": 1234}]
    assert view["instructions"][0]["address_table_lookups"][0]["writable_indexes"] == [0]


def test_policy_view_of_a_transfer_and_an_spl_transfer_checked() -> None:
    program = Pubkey.from_string(sorted(TOKEN_PROGRAMS)[0])
    source, mint, dest = (Pubkey.from_bytes(bytes(32 * [n])) for n in (11, 12, 13))
    data = bytes([12]) + (500).to_bytes(8, "little") + bytes([6])
    spl = Instruction(program, data, [
        AccountMeta(source, False, True), AccountMeta(mint, False, False),
        AccountMeta(dest, False, True), AccountMeta(SIGNER.pubkey(), True, False)])
    message = Message.new_with_blockhash([_transfer(), spl], SIGNER.pubkey(), BLOCKHASH)
    view = decode(_unsigned(message)).policy_variables(None)["solana"]["tx"]
    assert view["recent_blockhash"] == str(BLOCKHASH)
    assert view["program_keys"] == ["11111111111111111111111111111111", str(program)]
    assert view["account_keys"][0] == str(SIGNER.pubkey())
    assert view["transfers"] == [{"from": str(SIGNER.pubkey()), "to": str(TO), "amount": 1234}]
    assert view["spl_transfers"] == [{
        "from": str(source), "to": str(dest), "amount": 500, "owner": str(SIGNER.pubkey()),
        "signers": [], "token_mint": str(mint)}]
    first = view["instructions"][0]["accounts"][0]
    assert first == {"account_key": str(SIGNER.pubkey()), "signer": True, "writable": True}


def test_a_key_that_is_not_a_signer_is_refused() -> None:
    message = Message.new_with_blockhash([_transfer(OTHER.pubkey())], OTHER.pubkey(), BLOCKHASH)
    with pytest.raises(InvalidRequest, match="is not a signer of this Solana transaction"):
        decode(_unsigned(message)).accept(_target())
    with pytest.raises(InvalidRequest, match="CURVE_SECP256K1 key and cannot sign Solana transactions"):
        decode(_unsigned(message)).accept(_target(curve=Curve.SECP256K1))


@pytest.mark.parametrize(
    ("unsigned", "fragment"),
    [
        ("zz", "must be hex"),
        ("0102", "not a serialized Solana transaction"),
        (_unsigned(Message.new_with_blockhash([_transfer()], SIGNER.pubkey(), BLOCKHASH))[:-10],
         "not a serialized Solana transaction"),
        (_unsigned(Message.new_with_blockhash([_transfer()], SIGNER.pubkey(), BLOCKHASH)) + "00",
         "trailing bytes"),
    ],
)
def test_malformed_solana_transactions(unsigned: str, fragment: str) -> None:
    with pytest.raises(InvalidTransaction, match=fragment):
        decode(unsigned)
