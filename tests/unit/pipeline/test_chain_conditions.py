"""``solana.tx``, ``tron.tx``, ``bitcoin.tx`` and ``eth.eip_7702_authorization`` as the policy
engine sees them (``condition_context`` over real SQLite rows, then ``evaluate``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import coincurve
import pytest
import rlp
from embit import script as scripts
from embit.ec import PublicKey
from embit.psbt import PSBT
from embit.transaction import Transaction, TransactionInput, TransactionOutput
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.crypto.addresses import AddressFormat, Curve, derive_address
from infra.db.models.organizations import Organization
from infra.db.models.wallets import Wallet, WalletAccount
from infra.pipeline.conditions import condition_context
from infra.pipeline.engine import Outcome, Policy, Proposal, RootQuorum, evaluate
from infra.policy.variables import user_variable
from tests.support.sqlite import sqlite_session

SIGN_TX = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2"
SOL = Keypair.from_seed(bytes(32 * [4]))
SECP = coincurve.PrivateKey(bytes(32 * [5])).public_key.format(True)
TRON = derive_address(Curve.SECP256K1, AddressFormat.TRON, SECP)
BTC = derive_address(Curve.SECP256K1, AddressFormat.BITCOIN_TESTNET_P2WPKH, SECP)
TO = Pubkey.from_bytes(bytes(32 * [9]))
TRON_RAW = (  # tronweb raw_data: 1000 sun to TJRabPrwbZy45sbavfcjinPJC18kjpRTv8 (tests/unit/chains)
    "0a02a2b42208010203040506070840e0a499ffbc3152046d656d6f5a66080112620a2d747970652e676f6f676c"
    "65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412310a1541928c9af065"
    "1632157ef27a2cf17ca72c575a4d211215415cbdd86a2fa8dc4bddd8a8f69dba48572eec07fb18e8077080d095"
    "ffbc31"
)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with sqlite_session(tmp_path / "chains.db") as s:
        s.add(Organization(id="org", name="org", root_quorum_threshold=1))
        s.flush()
        s.add(Wallet(id="w1", organization_id="org", name="chains", wrapped_key="", ciphertext=""))
        s.flush()
        for i, (curve, fmt, address, public) in enumerate([
            (Curve.ED25519, AddressFormat.SOLANA, str(SOL.pubkey()), bytes(SOL.pubkey()).hex()),
            (Curve.SECP256K1, AddressFormat.TRON, TRON, SECP.hex()),
            (Curve.SECP256K1, AddressFormat.BITCOIN_TESTNET_P2WPKH, BTC, SECP.hex()),
        ]):
            s.add(WalletAccount(id=f"a{i}", organization_id="org", wallet_id="w1", curve=curve.value,
                                path_format="PATH_FORMAT_BIP32", path=f"m/{i}",
                                address_format=fmt.value, address=address, public_key=public))
        s.commit()
        yield s


def _solana() -> str:
    ix = transfer(TransferParams(from_pubkey=SOL.pubkey(), to_pubkey=TO, lamports=700))
    message = Message.new_with_blockhash([ix], SOL.pubkey(), Hash.from_bytes(bytes(32 * [3])))
    return bytes(VersionedTransaction.populate(message, [Signature.default()])).hex()


def _psbt() -> str:
    mine = scripts.p2wpkh(PublicKey.parse(SECP))
    psbt = PSBT(Transaction(vin=[TransactionInput(bytes(32 * [1]), 0)],
                            vout=[TransactionOutput(49_000, mine)]))
    psbt.inputs[0].witness_utxo = TransactionOutput(50_000, mine)
    return str(psbt.serialize().hex())


def _eip7702(delegates: list[str]) -> str:
    auths = [[1, bytes.fromhex(d[2:]), 4, 0, 1, 2] for d in delegates]
    return "04" + rlp.encode([1, 0, 1, 3, 60000, bytes(20 * [7]), 0, b"", [], auths]).hex()


CASES: list[tuple[str, str, str, str]] = [
    # (type, signWith, unsignedTransaction, condition that must hold)
    ("TRANSACTION_TYPE_SOLANA", str(SOL.pubkey()), _solana(),
     f"solana.tx.transfers.count() == 1 && solana.tx.transfers[0].to == '{TO}' && "
     f"solana.tx.transfers[0].amount == 700 && solana.tx.account_keys[0] == '{SOL.pubkey()}'"),
    ("TRANSACTION_TYPE_TRON", TRON, TRON_RAW,
     "tron.tx.contract[0].type == 'TransferContract' && tron.tx.contract[0].amount == 1000 && "
     "tron.tx.contract[0].to_address == 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' && "
     "tron.tx.data == 'memo'"),
    ("TRANSACTION_TYPE_BITCOIN", BTC, _psbt(),
     f"bitcoin.tx.fee == 1000 && bitcoin.tx.outputs[0].address == '{BTC}' && "
     "bitcoin.tx.outputs[0].address_type == 'P2WPKH' && bitcoin.tx.version == '2'"),
    ("TRANSACTION_TYPE_ETHEREUM", "w1", _eip7702(["0x" + "11" * 20]),
     "eth.eip_7702_authorization.address == '0x" + "11" * 20 + "' && "
     "eth.eip_7702_authorization.nonce == 4 && eth.tx.type == 'TYPE_4'"),
]


def _decide(session: Session, params: dict[str, Any], condition: str) -> Outcome:
    proposal = Proposal(SIGN_TX, params, "alice", [user_variable("alice")],
                        context=condition_context(session, "org", SIGN_TX, params),
                        resource_action=registry().resource_action(SIGN_TX))
    decision = evaluate([Policy("p", "EFFECT_ALLOW", condition)], proposal,
                        RootQuorum(1, frozenset({"root"})))
    return decision.outcome


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_a_condition_on_each_chain_holds(session: Session, case: tuple[str, str, str, str]) -> None:
    tx_type, sign_with, unsigned, condition = case
    params = {"signWith": sign_with, "type": tx_type, "unsignedTransaction": unsigned}
    assert _decide(session, params, condition) is Outcome.ALLOW


def test_two_authorizations_leave_eip_7702_out_so_the_policy_errors(session: Session) -> None:
    params = {"signWith": "w1", "type": "TRANSACTION_TYPE_ETHEREUM",
              "unsignedTransaction": _eip7702(["0x" + "11" * 20, "0x" + "22" * 20])}
    context = condition_context(session, "org", SIGN_TX, params)
    assert "eip_7702_authorization" not in context["eth"]
    assert _decide(session, params, "eth.eip_7702_authorization.address == '0x'") is not (
        Outcome.ALLOW)


def test_an_undecodable_transaction_exposes_no_chain_variable(session: Session) -> None:
    params = {"signWith": TRON, "type": "TRANSACTION_TYPE_TRON", "unsignedTransaction": "zz"}
    context = condition_context(session, "org", SIGN_TX, params)
    assert "tron" not in context and context["wallet_account"] == {"address": TRON}
