"""Condition variables built from real rows (``infra.pipeline.conditions.condition_context``, SQLite).

``wallet``, ``wallets``, ``wallet_account``, ``private_key``, ``eth.tx`` (sender, ABI-decoded
call) and ``eth.eip_712`` as the consensus worker builds them, and policies evaluated over
them without injecting any value (PROTOCOL.md §8.3).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import coincurve
import pytest
import rlp
from eth_abi import encode
from eth_account import Account
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.db.models.identity import SmartContractInterface
from infra.db.models.organizations import Organization
from infra.db.models.wallets import PrivateKey, PrivateKeyAddress, Wallet, WalletAccount
from infra.pipeline.conditions import condition_context
from infra.pipeline.engine import Outcome, Policy, Proposal, RootQuorum, evaluate
from infra.policy.variables import user_variable
from tests.support.sqlite import sqlite_session

ACCOUNT = Account.from_key(b"\x01" * 32)
KEY_SECRET = b"\x02" * 32
KEY_ADDRESS = Account.from_key(KEY_SECRET).address
TOKEN = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"  # USDC on mainnet
RECIPIENT = "0x08d2b0a37F869FF76BACB5Bab3278E26ab7067B7"
ERC20 = [
    {"type": "function", "name": "transfer", "stateMutability": "nonpayable",
     "inputs": [{"name": "dst", "type": "address"}, {"name": "wad", "type": "uint256"}],
     "outputs": [{"name": "", "type": "bool"}]},
    {"type": "function", "name": "approve", "stateMutability": "nonpayable",
     "inputs": [{"name": "guy", "type": "address"}, {"name": "wad", "type": "uint256"}],
     "outputs": [{"name": "", "type": "bool"}]},
    {"type": "event", "name": "Transfer", "anonymous": False,
     "inputs": [{"name": "src", "type": "address", "indexed": True},
                {"name": "dst", "type": "address", "indexed": True},
                {"name": "wad", "type": "uint256", "indexed": False}]},
]  # fmt: skip
SIGN_TX = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2"
ETHEREUM = "TRANSACTION_TYPE_ETHEREUM"


def _calldata(selector: str, types: list[str], values: list[Any]) -> bytes:
    return bytes.fromhex(selector) + encode(types, values)


def _unsigned(to: str, data: bytes, chain_id: int = 1) -> str:
    """An unsigned EIP-1559 transaction, hex without 0x."""
    fields = [chain_id, 7, 10**9, 3 * 10**10, 60000, bytes.fromhex(to[2:]), 0, data, []]
    return "02" + rlp.encode(fields).hex()


TRANSFER = _calldata("a9059cbb", ["address", "uint256"], [RECIPIENT, 5_000_000])


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with sqlite_session(tmp_path / "context.db") as s:
        for org in ("org", "other"):
            s.add(Organization(id=org, name=org, root_quorum_threshold=1))
        s.flush()
        s.add_all([
            Wallet(id="w1", organization_id="org", name="treasury", wrapped_key="", ciphertext="",
                   imported=True),
            Wallet(id="w2", organization_id="org", name="ops", wrapped_key="", ciphertext=""),
            Wallet(id="w9", organization_id="other", name="theirs", wrapped_key="",
                   ciphertext=""),
        ])
        s.flush()
        s.add(WalletAccount(id="a1", organization_id="org", wallet_id="w1",
                            curve="CURVE_SECP256K1", path_format="PATH_FORMAT_BIP32",
                            path="m/44'/60'/0'/0/0", address_format="ADDRESS_FORMAT_ETHEREUM",
                            address=ACCOUNT.address, public_key="02"))
        public = coincurve.PrivateKey(KEY_SECRET).public_key.format(compressed=True).hex()
        s.add(PrivateKey(id="k1", organization_id="org", name="hot key", curve="CURVE_SECP256K1",
                         public_key=public, addresses=[], tags=["tag-hot"], wrapped_key="",
                         ciphertext="", exported=True))
        s.flush()
        s.add(PrivateKeyAddress(private_key_id="k1", address_format="ADDRESS_FORMAT_ETHEREUM",
                                organization_id="org", address=KEY_ADDRESS))
        s.add(SmartContractInterface(organization_id="org", address=TOKEN.lower(),
                                     interface=json.dumps(ERC20),
                                     interface_type="SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM",
                                     label="USDC"))
        s.commit()
        yield s


def _sign_tx(sign_with: str, to: str = TOKEN, data: bytes = TRANSFER) -> dict[str, Any]:
    return {"signWith": sign_with, "type": ETHEREUM, "unsignedTransaction": _unsigned(to, data)}


def test_a_wallet_account_signature_shows_wallet_account_and_sender(session: Session) -> None:
    context = condition_context(session, "org", SIGN_TX, _sign_tx(ACCOUNT.address))
    assert context["wallet"] == {"id": "w1", "imported": True, "exported": False,
                                 "label": "treasury"}
    assert context["wallet_account"] == {"address": ACCOUNT.address}
    assert "private_key" not in context
    tx = context["eth"]["tx"]
    assert tx["from"] == ACCOUNT.address.lower()
    assert (tx["to"], tx["chain_id"], tx["nonce"], tx["type"]) == (TOKEN.lower(), 1, 7, "TYPE_2")


def test_the_abi_decodes_the_call(session: Session) -> None:
    tx = condition_context(session, "org", SIGN_TX, _sign_tx(ACCOUNT.address))["eth"]["tx"]
    assert tx["function_name"] == "transfer"
    assert tx["function_signature"] == "0xa9059cbb"
    assert tx["contract_call_args"] == {"dst": RECIPIENT, "wad": 5_000_000}


@pytest.mark.parametrize("sign_with", ["k1", KEY_ADDRESS, KEY_ADDRESS.lower()])
def test_a_private_key_signature_shows_the_key_and_its_address(
    session: Session, sign_with: str
) -> None:
    context = condition_context(session, "org", SIGN_TX, _sign_tx(sign_with))
    assert context["private_key"] == {"id": "k1", "tags": ["tag-hot"], "imported": False,
                                      "exported": True, "label": "hot key"}
    assert "wallet" not in context and "wallet_account" not in context
    assert context["eth"]["tx"]["from"] == KEY_ADDRESS.lower()


def test_no_abi_for_the_destination_leaves_the_call_fields_out(session: Session) -> None:
    other = "0x" + "35" * 20
    tx = condition_context(session, "org", SIGN_TX, _sign_tx("k1", to=other))["eth"]["tx"]
    assert tx["to"] == other
    assert not {"function_name", "function_signature", "contract_call_args"} & set(tx)


def test_another_organizations_abi_is_not_used(session: Session) -> None:
    session.add(Wallet(id="w8", organization_id="other", name="x", wrapped_key="", ciphertext=""))
    tx = condition_context(session, "other", SIGN_TX, _sign_tx("nobody"))["eth"]["tx"]
    assert "function_name" not in tx and tx["from"] == ""


def test_calldata_of_a_function_the_abi_lacks_is_not_decoded(session: Session) -> None:
    mint = _calldata("40c10f19", ["address", "uint256"], [RECIPIENT, 1])
    tx = condition_context(session, "org", SIGN_TX, _sign_tx("k1", data=mint))["eth"]["tx"]
    assert tx["data"].startswith("0x40c10f19") and "function_name" not in tx


def test_an_unknown_signer_adds_no_signer_variables(session: Session) -> None:
    context = condition_context(session, "org", SIGN_TX, _sign_tx("0x" + "99" * 20))
    assert not {"wallet", "wallet_account", "private_key"} & set(context)
    assert context["eth"]["tx"]["from"] == ""


def test_wallet_ids_build_wallets_of_this_organization_only(session: Session) -> None:
    context = condition_context(session, "org", "ACTIVITY_TYPE_DELETE_WALLETS",
                                {"walletIds": ["w1", "w2", "w9", "missing"]})
    assert sorted(w["id"] for w in context["wallets"]) == ["w1", "w2"]


def test_wallet_id_builds_wallet(session: Session) -> None:
    context = condition_context(session, "org", "ACTIVITY_TYPE_UPDATE_WALLET",
                                {"walletId": "w2", "walletName": "x"})
    assert context["wallet"] == {"id": "w2", "imported": False, "exported": False, "label": "ops"}
    assert "wallet" not in condition_context(session, "org", "ACTIVITY_TYPE_UPDATE_WALLET",
                                             {"walletId": "w9"})


def test_export_wallet_account_by_address_builds_wallet_and_account(session: Session) -> None:
    context = condition_context(session, "org", "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT",
                                {"address": ACCOUNT.address, "targetPublicKey": "04"})
    assert context["wallet"]["id"] == "w1"
    assert context["wallet_account"] == {"address": ACCOUNT.address}


def test_private_key_id_builds_private_key(session: Session) -> None:
    context = condition_context(session, "org", "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY",
                                {"privateKeyId": "k1", "targetPublicKey": "04"})
    assert context["private_key"]["id"] == "k1" and "wallet" not in context


MAIL = {
    "types": {"EIP712Domain": [{"name": "name", "type": "string"},
                               {"name": "chainId", "type": "uint256"},
                               {"name": "verifyingContract", "type": "address"}],
              "Mail": [{"name": "to", "type": "address"}, {"name": "amount", "type": "uint256"}]},
    "primaryType": "Mail",
    "domain": {"name": "Ether Mail", "chainId": "0x1", "verifyingContract": TOKEN},
    "message": {"to": RECIPIENT, "amount": "1500"},
}  # fmt: skip


@pytest.mark.parametrize("activity_type, payload_key", [
    ("ACTIVITY_TYPE_SIGN_RAW_PAYLOADS", "payloads"),
    ("ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", "payload"),
])
def test_eip712_payloads_build_eth_eip_712(
    session: Session, activity_type: str, payload_key: str
) -> None:
    payload: Any = json.dumps(MAIL)
    params = {"signWith": ACCOUNT.address, "encoding": "PAYLOAD_ENCODING_EIP712",
              "hashFunction": "HASH_FUNCTION_NOT_APPLICABLE",
              payload_key: [payload, "{}"] if payload_key == "payloads" else payload}
    context = condition_context(session, "org", activity_type, params)
    assert context["eth"]["eip_712"] == {
        "primary_type": "Mail",
        "domain": {"name": "Ether Mail", "chain_id": 1, "verifying_contract": TOKEN.lower()},
        "message": {"to": RECIPIENT.lower(), "amount": 1500},
    }
    assert context["wallet"]["id"] == "w1"


def test_a_hex_payload_builds_no_eip_712(session: Session) -> None:
    params = {"signWith": ACCOUNT.address, "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
              "hashFunction": "HASH_FUNCTION_KECCAK256", "payload": "00"}
    assert "eth" not in condition_context(session, "org", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", params)


# Policies over variables built from the rows above (nothing injected).
DOCS_WETH = ("eth.tx.contract_call_args['wad'] < 1000000000000000000 && "
             f"eth.tx.contract_call_args['dst'] == '{RECIPIENT}'")
ROWS = [
    ("ethereum.mdx: limit transfers by ABI arguments", DOCS_WETH, "k1", TRANSFER, Outcome.ALLOW),
    ("ethereum.mdx: only transfer calls to the contract",
     f"eth.tx.to == '{TOKEN.lower()}' && eth.tx.function_name == 'transfer'", ACCOUNT.address,
     TRANSFER, Outcome.ALLOW),
    ("smart-contract-interfaces: by function signature",
     "eth.tx.function_signature == '0xa9059cbb'", "k1", TRANSFER, Outcome.ALLOW),
    ("ABI arguments: amount over the limit",
     DOCS_WETH, "k1",
     _calldata("a9059cbb", ["address", "uint256"], [RECIPIENT, 2 * 10**18]), Outcome.DENY_IMPLICIT),
    ("ABI arguments: approve is not transfer",
     "eth.tx.function_name == 'transfer'", "k1",
     _calldata("095ea7b3", ["address", "uint256"], [RECIPIENT, 1]), Outcome.DENY_IMPLICIT),
    ("eth.tx.from of a private key signer",
     f"eth.tx.from == '{KEY_ADDRESS.lower()}'", "k1", TRANSFER, Outcome.ALLOW),
    ("private_key.tags of the signer", "private_key.tags.contains('tag-hot')", KEY_ADDRESS,
     TRANSFER, Outcome.ALLOW),
]  # fmt: skip


@pytest.mark.parametrize("source, condition, sign_with, data, expected", ROWS,
                         ids=[r[0] for r in ROWS])
def test_policies_over_variables_from_rows(
    session: Session, source: str, condition: str, sign_with: str, data: bytes,
    expected: Outcome,
) -> None:
    params = _sign_tx(sign_with, data=data)
    proposal = Proposal(SIGN_TX, params, "alice", [user_variable("alice")],
                        context=condition_context(session, "org", SIGN_TX, params),
                        resource_action=registry().resource_action(SIGN_TX))
    decision = evaluate([Policy("p", "EFFECT_ALLOW", condition)], proposal,
                        RootQuorum(1, frozenset({"root"})))
    assert decision.outcome is expected, decision.policy_outcomes
    assert decision.policy_outcomes[0].outcome is not Outcome.ERROR
