"""Policies see each chain's transaction: ``eth.tx``, ``eth.eip_7702_authorization``,
``solana.tx``, ``tron.tx`` and ``bitcoin.tx`` (PROTOCOL.md §8.3), end to end.

A non-root user may sign only what one condition per chain allows; the same transaction with
one field changed is denied (403, implicit deny).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import rlp
from embit import script as scripts
from embit.ec import PublicKey
from embit.networks import NETWORKS
from embit.psbt import PSBT
from embit.transaction import Transaction, TransactionInput, TransactionOutput
from solders.hash import Hash
from solders.message import Message
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreatePolicyBody,
    CreateUsersBody,
    CreateWalletBody,
    GetWalletAccountsBody,
    SignTransactionBody,
)

from tests.support.deployment import Deployment, Key, make_organization
from tests.support.keys import make_key

DEAD = "0x000000000000000000000000000000000000dead"
DELEGATE = "0x" + "11" * 20
SOL_TO = Pubkey.from_bytes(bytes(32 * [9]))
TRON_TO = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"
# tronweb's raw_data of a 1000-sun TransferContract to TRON_TO (see tests/unit/chains).
TRON_RAW = (
    "0a02a2b42208010203040506070840e0a499ffbc3152046d656d6f5a66080112620a2d747970652e676f6f676c"
    "65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412310a1541928c9af065"
    "1632157ef27a2cf17ca72c575a4d211215415cbdd86a2fa8dc4bddd8a8f69dba48572eec07fb18e8077080d095"
    "ffbc31"
)
BTC_TO = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"
ACCOUNTS = [
    ("CURVE_SECP256K1", "m/44'/60'/0'/0/0", "ADDRESS_FORMAT_ETHEREUM"),
    ("CURVE_ED25519", "m/44'/501'/0'/0'", "ADDRESS_FORMAT_SOLANA"),
    ("CURVE_SECP256K1", "m/44'/195'/0'/0/0", "ADDRESS_FORMAT_TRON"),
    ("CURVE_SECP256K1", "m/84'/1'/0'/0/0", "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH"),
]
CONDITIONS = [
    f"activity.params.type == 'TRANSACTION_TYPE_ETHEREUM' && eth.tx.to == '{DEAD}' && "
    "eth.tx.value < 10 && eth.tx.chain_id == 11155111 && eth.tx.type == 'TYPE_2'",
    f"eth.tx.type == 'TYPE_4' && eth.eip_7702_authorization.address == '{DELEGATE}'",
    f"solana.tx.transfers.all(t, t.to == '{SOL_TO}' && t.amount <= 5000) && "
    "solana.tx.program_keys.all(p, p == '11111111111111111111111111111111')",
    f"tron.tx.contract.all(c, c.type == 'TransferContract' && c.to_address == '{TRON_TO}' && "
    "c.amount <= 1000)",
    f"bitcoin.tx.fee < 5000 && bitcoin.tx.outputs.all(o, o.address == '{BTC_TO}')",
]


def _eth_1559(value: int) -> str:
    return "02" + rlp.encode([11155111, 0, 1, 3, 21000, bytes.fromhex(DEAD[2:]), value, b"",
                              []]).hex()


def _eth_7702(delegate: str) -> str:
    auth = [11155111, bytes.fromhex(delegate[2:]), 0, 1, 5, 6]
    return "04" + rlp.encode([11155111, 0, 1, 3, 60000, bytes.fromhex(DEAD[2:]), 0, b"", [],
                              [auth]]).hex()


def _solana(sender: str, to: Pubkey) -> str:
    ix = transfer(TransferParams(from_pubkey=Pubkey.from_string(sender), to_pubkey=to,
                                 lamports=1000))
    message = Message.new_with_blockhash([ix], Pubkey.from_string(sender),
                                         Hash.from_bytes(bytes(32 * [3])))
    return bytes(VersionedTransaction.populate(message, [Signature.default()])).hex()


def _psbt(public_key: str, fee: int) -> str:
    mine = scripts.p2wpkh(PublicKey.parse(bytes.fromhex(public_key)))
    tx = Transaction(vin=[TransactionInput(bytes(32 * [1]), 0)],
                     vout=[TransactionOutput(50_000 - fee, scripts.Script.from_address(BTC_TO))])
    psbt = PSBT(tx)
    psbt.inputs[0].witness_utxo = TransactionOutput(50_000, mine)
    assert mine.address(NETWORKS["test"]).startswith("tb1q")
    return str(psbt.serialize().hex())


@pytest.fixture(scope="module")
def org(embedded: Deployment) -> tuple[Key, list[tuple[str, str]]]:
    root = make_organization(embedded, "chain policies")
    key = make_key()
    created = embedded.client(root).create_users(CreateUsersBody(users=[{
        "userName": "alice", "apiKeys": [key.api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": []}]))
    alice = Key(root.organization_id, created.userIds[0], key.public_key, key.private_key)
    wallet = embedded.client(root).create_wallet(CreateWalletBody(walletName="chains", accounts=[
        {"curve": c, "pathFormat": "PATH_FORMAT_BIP32", "path": p, "addressFormat": f}
        for c, p, f in ACCOUNTS]))
    listed = embedded.client(root).get_wallet_accounts(GetWalletAccountsBody(
        walletId=wallet.walletId)).accounts
    keys = {a.address: a.publicKey for a in listed}
    for i, condition in enumerate(CONDITIONS):
        embedded.client(root).create_policy(CreatePolicyBody(
            policyName=f"chain {i}", effect="EFFECT_ALLOW", notes="", condition=condition,
            consensus=f"approvers.any(user, user.id == '{alice.user_id}')"))
    return alice, [(a, keys[a]) for a in wallet.addresses]


CASES: dict[str, tuple[str, int, Callable[[str, str], str], Callable[[str, str], str]]] = {
    # name: (type, account index, allowed(address, public key), denied(address, public key))
    "ethereum": ("TRANSACTION_TYPE_ETHEREUM", 0, lambda a, k: _eth_1559(1),
                 lambda a, k: _eth_1559(100)),
    "eip7702": ("TRANSACTION_TYPE_ETHEREUM", 0, lambda a, k: _eth_7702(DELEGATE),
                lambda a, k: _eth_7702("0x" + "22" * 20)),
    "solana": ("TRANSACTION_TYPE_SOLANA", 1, lambda a, k: _solana(a, SOL_TO),
               lambda a, k: _solana(a, Pubkey.from_bytes(bytes(32 * [8])))),
    "tron": ("TRANSACTION_TYPE_TRON", 2, lambda a, k: TRON_RAW,
             lambda a, k: TRON_RAW.replace("18e807", "18d00f")),  # amount 1000 -> 2000
    "bitcoin": ("TRANSACTION_TYPE_BITCOIN", 3, lambda a, k: _psbt(k, 1000),
                lambda a, k: _psbt(k, 20_000)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_condition_on_each_chain_allows_and_denies(
    embedded: Deployment, org: tuple[Key, list[tuple[str, str]]], name: str
) -> None:
    alice, accounts = org
    tx_type, index, allowed, denied = CASES[name]
    address, public_key = accounts[index]

    def sign(unsigned: str) -> str:
        return str(embedded.client(alice).sign_transaction(SignTransactionBody(
            signWith=address, type=tx_type, unsignedTransaction=unsigned)).signedTransaction)

    assert sign(allowed(address, public_key))
    with pytest.raises(TurnkeyNetworkError) as refused:
        sign(denied(address, public_key))
    assert refused.value.status_code == 403
