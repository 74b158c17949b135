"""``sign_transaction`` end to end: the chains' own libraries and the official Turnkey SDKs.

``tests/interop/sign_transactions.mjs`` builds transactions with viem, ethers,
@solana/web3.js, bitcoinjs-lib and tronweb, has walletd sign them through @turnkey/viem,
@turnkey/ethers, @turnkey/solana and @turnkey/http, and checks the results with those same
libraries (recovery, signature verification, PSBT finalization). Malformed transactions are
400s that say what to send, raised before the activity is stored.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from embit import ec
from embit import script as scripts
from embit.psbt import PSBT
from embit.transaction import Transaction, TransactionInput, TransactionOutput
from turnkey_sdk_types import CreateWalletBody, GetActivitiesBody, GetWalletAccountsBody

from tests.support.deployment import Deployment
from tests.support.interop import node_with, run_script
from tests.support.raw_api import envelope, stamp_headers

SIGN = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2"
ACCOUNTS = {
    "ethereum": ("CURVE_SECP256K1", "m/44'/60'/0'/0/0", "ADDRESS_FORMAT_ETHEREUM"),
    "solana": ("CURVE_ED25519", "m/44'/501'/0'/0'", "ADDRESS_FORMAT_SOLANA"),
    "tron": ("CURVE_SECP256K1", "m/44'/195'/0'/0/0", "ADDRESS_FORMAT_TRON"),
    "p2wpkh": ("CURVE_SECP256K1", "m/84'/1'/0'/0/0", "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH"),
    "p2tr": ("CURVE_SECP256K1", "m/86'/1'/0'/0/0", "ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR"),
    "p2pkh": ("CURVE_SECP256K1", "m/44'/1'/0'/0/0", "ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH"),
}
INTEROP_CASES = [
    *(f"{lib}:{kind}" for lib in ("viem", "ethers")
      for kind in ("legacy", "eip155", "eip2930", "eip1559", "eip4844", "eip7702")),
    "solana:legacy-transfer", "solana:v0-lookup-table-transfer",
    "bitcoin:psbt-p2wpkh-p2tr-p2pkh", "tron:transfer",
]  # fmt: skip


def _foreign_psbt() -> str:
    """A PSBT spending a P2WPKH output of a key walletd does not hold."""
    key = ec.PrivateKey(bytes(31) + b"\x33").get_public_key()
    tx = Transaction(vin=[TransactionInput(bytes(32 * [1]), 0)],
                     vout=[TransactionOutput(1000, scripts.p2wpkh(key))])
    psbt = PSBT(tx)
    psbt.inputs[0].witness_utxo = TransactionOutput(50_000, scripts.p2wpkh(key))
    return str(psbt.serialize().hex())


FOREIGN_PSBT = _foreign_psbt()


def _accounts(dep: Deployment) -> dict[str, dict[str, str]]:
    client = dep.client()
    created = client.create_wallet(CreateWalletBody(walletName="chains", accounts=[
        {"curve": c, "pathFormat": "PATH_FORMAT_BIP32", "path": p, "addressFormat": f}
        for c, p, f in ACCOUNTS.values()]))
    listed = client.get_wallet_accounts(GetWalletAccountsBody(walletId=created.walletId))
    keys = {a.address: a.publicKey for a in listed.accounts}
    return {name: {"address": address, "publicKey": keys[address]}
            for name, address in zip(ACCOUNTS, created.addresses, strict=True)}


@pytest.fixture(scope="module")
def accounts(embedded: Deployment) -> dict[str, dict[str, str]]:
    return _accounts(embedded)


def test_transactions_of_every_chain_interoperate_with_the_official_sdks(
    embedded: Deployment, accounts: dict[str, dict[str, str]]
) -> None:
    node = node_with("@turnkey/viem", "@turnkey/ethers", "@turnkey/solana", "bitcoinjs-lib",
                     "tronweb")
    root = embedded.root
    results = run_script(node, "sign_transactions.mjs", {
        "baseUrl": embedded.base_url, "organizationId": root.organization_id,
        "apiPublicKey": root.public_key, "apiPrivateKey": root.private_key,
        "accounts": accounts,
    }, timeout=300)  # fmt: skip
    assert sorted(results) == sorted(INTEROP_CASES)
    failed = {name: outcome for name, outcome in results.items() if outcome != "ok"}
    assert failed == {}


def _sign_count(dep: Deployment) -> int:
    listed = dep.client().get_activities(GetActivitiesBody(
        filterByType=[SIGN], paginationOptions={"limit": "100"}))
    return len(listed.activities)


def _submit(dep: Deployment, params: dict[str, Any]) -> Any:
    body = envelope(SIGN, dep.root.organization_id, params)
    return dep.post("/public/v1/submit/sign_transaction", body, stamp_headers(dep, dep.root, body))


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        (("ethereum", "TRANSACTION_TYPE_ETHEREUM", "0xzz"), "must be hex"),
        (("ethereum", "TRANSACTION_TYPE_ETHEREUM", "02ea83aa36a707843b9aca0084b2d05e00825208"),
         "not valid RLP"),
        (("solana", "TRANSACTION_TYPE_ETHEREUM",
          "02ea83aa36a707843b9aca0084b2d05e0082520894000000000000000000000000000000000000dead0180c0"),
         "cannot sign Ethereum transactions"),
        (("tron", "TRANSACTION_TYPE_ETHEREUM",
          "02ea83aa36a707843b9aca0084b2d05e0082520894000000000000000000000000000000000000dead0180c0"),
         "not an account of Ethereum"),
        (("ethereum", "TRANSACTION_TYPE_SOLANA", "0102"), "not a serialized Solana transaction"),
        (("ethereum", "TRANSACTION_TYPE_TRON", "0a02a2b4"), "raw_data_hex"),
        (("p2wpkh", "TRANSACTION_TYPE_BITCOIN", "0200000001"), "not a PSBT"),
        (("p2wpkh", "TRANSACTION_TYPE_BITCOIN", FOREIGN_PSBT), "no input that signWith can sign"),
        (("ethereum", "TRANSACTION_TYPE_TEMPO", "76c0"), "is not supported; send one of"),
    ],
    ids=["bad-hex", "truncated-rlp", "ed25519-for-ethereum", "tron-account-for-ethereum",
         "bad-solana", "bad-tron", "not-a-psbt", "psbt-without-signer-input", "tempo"],
)
def test_malformed_transactions_are_400s_before_anything_is_stored(
    embedded: Deployment, accounts: dict[str, dict[str, str]], case: tuple[str, str, str],
    fragment: str,
) -> None:
    account, tx_type, unsigned = case
    before = _sign_count(embedded)
    answer = _submit(embedded, {"signWith": accounts[account]["address"], "type": tx_type,
                                "unsignedTransaction": unsigned})
    assert answer.status_code == 400, answer.text
    body = json.loads(answer.text)
    assert fragment in body["message"] and body["code"] == 3
    codes = {d.get("turnkeyErrorCode") for d in body["details"]} - {None}
    wrong_signer = "signWith" in fragment or "account" in fragment or "cannot sign" in fragment
    assert codes == ({"REQUEST_INVALID"} if wrong_signer else
                     {"UNSUPPORTED_TRANSACTION_TYPE"} if tx_type.endswith("TEMPO") else
                     {"INVALID_TRANSACTION"})
    assert _sign_count(embedded) == before  # refused in check: no activity, no executor


def test_refusals_and_a_signature_on_the_production_path(production: Deployment) -> None:
    # gunicorn ingress + separate executor processes over PostgreSQL and RabbitMQ.
    accounts = _accounts(production)
    before = _sign_count(production)
    for account, tx_type, unsigned in (
        ("ethereum", "TRANSACTION_TYPE_ETHEREUM", "02ea83aa36a707843b9aca0084b2d05e00825208"),
        ("p2wpkh", "TRANSACTION_TYPE_BITCOIN", FOREIGN_PSBT),
        ("solana", "TRANSACTION_TYPE_TRON", "0a02a2b4"),
    ):
        answer = _submit(production, {"signWith": accounts[account]["address"], "type": tx_type,
                                      "unsignedTransaction": unsigned})
        assert answer.status_code == 400 and answer.json()["code"] == 3, answer.text
    assert _sign_count(production) == before
    _signs_and_stores(production, accounts)


def test_a_good_transaction_is_stored_and_signed(
    embedded: Deployment, accounts: dict[str, dict[str, str]]
) -> None:
    _signs_and_stores(embedded, accounts)


def _signs_and_stores(dep: Deployment, accounts: dict[str, dict[str, str]]) -> None:
    before = _sign_count(dep)
    answer = _submit(dep, {
        "signWith": accounts["ethereum"]["address"], "type": "TRANSACTION_TYPE_ETHEREUM",
        "unsignedTransaction": "02ea83aa36a707843b9aca0084b2d05e0082520894"
                               "000000000000000000000000000000000000dead0180c0"})  # fmt: skip
    assert answer.status_code == 200, answer.text
    result = answer.json()["activity"]["result"]["signTransactionResult"]["signedTransaction"]
    assert result.startswith("02") and _sign_count(dep) == before + 1
