"""Wallets, accounts, signing, import/export end to end with the official client.

Every test runs on the embedded path and on the production path (gunicorn, PostgreSQL,
RabbitMQ, worker processes). Signatures are verified with independent libraries.
"""

from __future__ import annotations

import json
import time

import coincurve
import nacl.exceptions
import nacl.signing
import pytest
import requests
from eth_keys import keys as eth_keys
from eth_utils import keccak
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreatePrivateKeysBody,
    CreateWalletAccountsBody,
    CreateWalletBody,
    DeletePrivateKeysBody,
    DeleteWalletAccountsBody,
    DeleteWalletsBody,
    ExportPrivateKeyBody,
    ExportWalletAccountBody,
    ExportWalletBody,
    GetPrivateKeyBody,
    GetPrivateKeysBody,
    GetWalletAccountBody,
    GetWalletAccountsBody,
    GetWalletBody,
    GetWalletsBody,
    ImportPrivateKeyBody,
    ImportWalletBody,
    InitImportPrivateKeyBody,
    InitImportWalletBody,
    SignRawPayloadBody,
    SignRawPayloadsBody,
    UpdateWalletBody,
)

from infra.crypto import bundles, hd, hpke
from infra.crypto.addresses import AddressFormat, Curve, derive_address
from tests.support.deployment import Deployment, make_organization

ABANDON = "abandon " * 11 + "about"
ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}
SOL = {"curve": "CURVE_ED25519", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/501'/0'/0'", "addressFormat": "ADDRESS_FORMAT_SOLANA"}


def _status(response: object) -> str:
    return response.activity.status.value  # type: ignore[attr-defined]


def _wallet(dep: Deployment, name: str = "w", accounts: list[dict] | None = None) -> tuple[str, list[str]]:
    created = dep.client().create_wallet(CreateWalletBody(
        walletName=name, accounts=accounts if accounts is not None else [ETH, SOL]))
    assert _status(created) == "ACTIVITY_STATUS_COMPLETED"
    return created.walletId, created.addresses


def _error(call: object) -> TurnkeyNetworkError:
    with pytest.raises(TurnkeyNetworkError) as err:
        call()  # type: ignore[operator]
    return err.value


def test_create_wallet_returns_addresses_and_queries_list_them(deployment: Deployment) -> None:
    wallet_id, (eth, sol) = _wallet(deployment, "main")
    assert eth.startswith("0x") and len(eth) == 42
    client = deployment.client()
    wallets = client.get_wallets(GetWalletsBody()).wallets
    assert wallet_id in {w.walletId for w in wallets}
    wallet = client.get_wallet(GetWalletBody(walletId=wallet_id)).wallet
    assert wallet.walletName == "main" and wallet.imported is False
    accounts = client.get_wallet_accounts(GetWalletAccountsBody(
        walletId=wallet_id, includeWalletDetails=True)).accounts
    assert [a.address for a in accounts] == [eth, sol]
    assert accounts[0].walletDetails.walletId == wallet_id
    assert accounts[1].curve.value == "CURVE_ED25519"
    # The account's public key derives the address independently.
    assert derive_address(Curve.SECP256K1, AddressFormat.ETHEREUM,
                          bytes.fromhex(accounts[0].publicKey)) == eth
    one = client.get_wallet_account(GetWalletAccountBody(walletId=wallet_id, address=sol)).account
    assert one.path == "m/44'/501'/0'/0'"


def test_wallet_accounts_paginate_and_filter(deployment: Deployment) -> None:
    wallet_id, _ = _wallet(deployment, "paged", [])
    paths = [dict(ETH, path=f"m/44'/60'/0'/0/{i}") for i in range(3)]
    added = deployment.client().create_wallet_accounts(CreateWalletAccountsBody(
        walletId=wallet_id, accounts=paths))
    assert len(added.addresses) == 3
    client = deployment.client()
    first = client.get_wallet_accounts(GetWalletAccountsBody(
        walletId=wallet_id, paginationOptions={"limit": "2"})).accounts
    rest = client.get_wallet_accounts(GetWalletAccountsBody(
        walletId=wallet_id, paginationOptions={"limit": "2", "after": first[-1].walletAccountId}
    )).accounts
    assert [a.address for a in first + rest] == added.addresses


def test_wallet_account_by_path(deployment: Deployment) -> None:
    wallet_id, (eth, sol) = _wallet(deployment, "by-path")
    client = deployment.client()
    for path, address in ((ETH["path"], eth), (SOL["path"], sol)):
        account = client.get_wallet_account(GetWalletAccountBody(
            walletId=wallet_id, path=path)).account
        assert (account.address, account.path, account.walletId) == (address, path, wallet_id)
    err = _error(lambda: client.get_wallet_account(GetWalletAccountBody(
        walletId=wallet_id, path="m/44'/60'/0'/0/9")))
    assert err.status_code == 404
    err = _error(lambda: client.get_wallet_account(GetWalletAccountBody(walletId=wallet_id)))
    assert err.status_code == 400 and "path" in str(err)


def test_wallet_accounts_without_wallet_id_list_the_whole_organization(
    deployment: Deployment,
) -> None:
    """No walletId: every account of the organization (and only of it), oldest first."""
    root_wallet, root_addresses = _wallet(deployment, "other-org-wallet")
    key = make_organization(deployment, "accounts org")
    client = deployment.client(key)
    first = client.create_wallet(CreateWalletBody(walletName="one", accounts=[ETH, SOL]))
    second = client.create_wallet(CreateWalletBody(walletName="two", accounts=[ETH]))
    accounts = client.get_wallet_accounts(GetWalletAccountsBody(
        includeWalletDetails=True)).accounts
    assert [a.address for a in accounts] == first.addresses + second.addresses
    assert [a.walletId for a in accounts] == [first.walletId] * 2 + [second.walletId]
    assert [a.walletDetails.walletName for a in accounts] == ["one", "one", "two"]
    assert {a.organizationId for a in accounts} == {key.organization_id}
    assert not {a.walletId for a in accounts} & {root_wallet}
    page = client.get_wallet_accounts(GetWalletAccountsBody(
        paginationOptions={"limit": "2"})).accounts
    rest = client.get_wallet_accounts(GetWalletAccountsBody(
        paginationOptions={"limit": "2", "after": page[-1].walletAccountId})).accounts
    assert [a.address for a in page + rest] == [a.address for a in accounts]
    # The root organization's own listing does not include the new organization's accounts.
    root_listing = deployment.client().get_wallet_accounts(GetWalletAccountsBody()).accounts
    assert {a.address for a in root_listing}.isdisjoint(first.addresses)
    assert root_addresses[0] in {a.address for a in deployment.client().get_wallet_accounts(
        GetWalletAccountsBody(walletId=root_wallet)).accounts}


def test_bad_wallet_inputs_are_400s_that_say_what_to_send(deployment: Deployment) -> None:
    client = deployment.client()
    err = _error(lambda: client.create_wallet(CreateWalletBody(
        walletName="x", accounts=[], mnemonicLength=13)))
    assert err.status_code == 400 and "12, 15, 18, 21, 24" in str(err)
    err = _error(lambda: client.create_wallet(CreateWalletBody(
        walletName="x", accounts=[dict(SOL, path="m/44'/501'/0'/0")])))
    assert err.status_code == 400 and "hardened" in str(err)
    err = _error(lambda: client.create_wallet(CreateWalletBody(
        walletName="x", accounts=[dict(SOL, addressFormat="ADDRESS_FORMAT_ETHEREUM")])))
    assert err.status_code == 400 and "CURVE_SECP256K1" in str(err)


def test_signatures_verify_with_independent_libraries(deployment: Deployment) -> None:
    wallet_id, (eth, sol) = _wallet(deployment, "signer")
    client = deployment.client()
    digest = keccak(b"walletd")
    sig = client.sign_raw_payload(SignRawPayloadBody(
        signWith=eth, payload=digest.hex(), encoding="PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction="HASH_FUNCTION_NO_OP"))
    assert _status(sig) == "ACTIVITY_STATUS_COMPLETED"
    assert len(sig.r) == 64 and len(sig.s) == 64 and sig.v in ("00", "01")
    raw = bytes.fromhex(sig.r + sig.s) + bytes([int(sig.v, 16)])
    recovered = eth_keys.Signature(raw).recover_public_key_from_msg_hash(digest)
    assert recovered.to_checksum_address() == eth
    ed = client.sign_raw_payload(SignRawPayloadBody(
        signWith=sol, payload="hello solana", encoding="PAYLOAD_ENCODING_TEXT_UTF8",
        hashFunction="HASH_FUNCTION_NOT_APPLICABLE"))
    # Verify against the key the account publishes (publicKey), not one derived from the address.
    sol_account = client.get_wallet_account(GetWalletAccountBody(
        walletId=wallet_id, address=sol)).account
    verify_key = nacl.signing.VerifyKey(bytes.fromhex(sol_account.publicKey))
    assert verify_key.verify(b"hello solana", bytes.fromhex(ed.r + ed.s)) == b"hello solana"
    with pytest.raises(nacl.exceptions.BadSignatureError):
        verify_key.verify(b"hello solana!", bytes.fromhex(ed.r + ed.s))
    from bip_utils import SolAddrDecoder

    assert SolAddrDecoder.DecodeAddr(sol) == bytes(verify_key)
    payloads = ["aa", "bb", "cafe"]
    many = client.sign_raw_payloads(SignRawPayloadsBody(
        signWith=eth, payloads=payloads, encoding="PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction="HASH_FUNCTION_KECCAK256"))
    assert len(many.signatures) == len(payloads)
    for payload, one in zip(payloads, many.signatures, strict=True):
        raw = bytes.fromhex(one.r + one.s) + bytes([int(one.v, 16)])
        signer = eth_keys.Signature(raw).recover_public_key_from_msg_hash(
            keccak(bytes.fromhex(payload)))
        assert signer.to_checksum_address() == eth, payload
    texts = ["first", "second"]
    many_ed = client.sign_raw_payloads(SignRawPayloadsBody(
        signWith=sol, payloads=texts, encoding="PAYLOAD_ENCODING_TEXT_UTF8",
        hashFunction="HASH_FUNCTION_NOT_APPLICABLE"))
    assert len(many_ed.signatures) == len(texts)
    for text, one in zip(texts, many_ed.signatures, strict=True):
        verify_key.verify(text.encode(), bytes.fromhex(one.r + one.s))


def test_invalid_signing_combinations_are_400(deployment: Deployment) -> None:
    _, (eth, _sol) = _wallet(deployment, "bad-sign")
    client = deployment.client()
    err = _error(lambda: client.sign_raw_payload(SignRawPayloadBody(
        signWith=eth, payload="abcd", encoding="PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction="HASH_FUNCTION_NO_OP")))
    assert err.status_code == 400 and "32-byte" in str(err)
    err = _error(lambda: client.sign_raw_payload(SignRawPayloadBody(
        signWith=eth, payload="{}", encoding="PAYLOAD_ENCODING_EIP712",
        hashFunction="HASH_FUNCTION_NO_OP")))
    assert err.status_code == 400 and "EIP-712" in str(err)
    err = _error(lambda: client.sign_raw_payload(SignRawPayloadBody(
        signWith="0x" + "00" * 20, payload="00", encoding="PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction="HASH_FUNCTION_SHA256")))
    assert err.status_code == 404


def test_private_keys_sign_by_id_and_by_address(deployment: Deployment) -> None:
    client = deployment.client()
    created = client.create_private_keys(CreatePrivateKeysBody(privateKeys=[{
        "privateKeyName": "hot", "curve": "CURVE_SECP256K1", "privateKeyTags": [],
        "addressFormats": ["ADDRESS_FORMAT_ETHEREUM"]}]))
    key = created.privateKeys[0]
    address = key.addresses[0].address
    fetched = client.get_private_key(GetPrivateKeyBody(privateKeyId=key.privateKeyId)).privateKey
    assert fetched.privateKeyName == "hot"
    assert key.privateKeyId in {k.privateKeyId for k in client.get_private_keys(
        GetPrivateKeysBody()).privateKeys}
    digest = keccak(b"pk")
    for sign_with in (key.privateKeyId, address):
        sig = client.sign_raw_payload(SignRawPayloadBody(
            signWith=sign_with, payload=digest.hex(), encoding="PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction="HASH_FUNCTION_NO_OP"))
        raw = bytes.fromhex(sig.r + sig.s) + bytes([int(sig.v, 16)])
        recovered = coincurve.PublicKey.from_signature_and_message(raw, digest, hasher=None)
        assert recovered.format().hex() == fetched.publicKey


def _signer_key(dep: Deployment) -> str:
    response = requests.get(dep.base_url + "/public/v1/discovery/keys", timeout=10)
    assert response.status_code == 200
    key = response.json()["signerPublicKey"]
    assert key.startswith("04") and len(key) == 130
    return str(key)


def test_import_then_export_round_trips_through_signed_bundles(deployment: Deployment) -> None:
    signer_key = _signer_key(deployment)
    client = deployment.client()
    user_id = deployment.root.user_id
    org_id = deployment.root.organization_id
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    data = bundles.verify_signed_bundle(init.importBundle, signer_key)
    assert data["organizationId"] == org_id and data["userId"] == user_id
    encrypted = bundles.encrypt_to_bundle(ABANDON.encode(), data["targetPublic"])
    imported = client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="imported", encryptedBundle=encrypted, accounts=[ETH]))
    assert imported.addresses == ["0x9858EfFD232B4033E47d90003D41EC34EcaEda94"]
    wallet = client.get_wallet(GetWalletBody(walletId=imported.walletId)).wallet
    assert wallet.imported is True
    embedded = hpke.generate_private_key()
    exported = client.export_wallet(ExportWalletBody(
        walletId=imported.walletId,
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    plaintext = bundles.open_export_bundle(exported.exportBundle, embedded,
                                           signer_public_key_hex=signer_key,
                                           organization_id=org_id)
    assert plaintext.decode() == ABANDON
    assert client.get_wallet(GetWalletBody(walletId=imported.walletId)).wallet.exported is True


def test_import_with_a_bad_mnemonic_is_a_400_saying_invalid_mnemonic(deployment: Deployment) -> None:
    client = deployment.client()
    user_id = deployment.root.user_id
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    target = json.loads(bytes.fromhex(json.loads(init.importBundle)["data"]))["targetPublic"]
    encrypted = bundles.encrypt_to_bundle(b"abandon " * 12, target)
    err = _error(lambda: client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="bad", encryptedBundle=encrypted, accounts=[])))
    assert err.status_code == 400 and "invalid mnemonic" in str(err)
    err = _error(lambda: client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="bad", encryptedBundle='{"x":1}', accounts=[])))
    assert err.status_code == 400


def test_update_and_delete_wallets(deployment: Deployment) -> None:
    wallet_id, _ = _wallet(deployment, "old", [])
    client = deployment.client()
    client.update_wallet(UpdateWalletBody(walletId=wallet_id, walletName="new"))
    assert client.get_wallet(GetWalletBody(walletId=wallet_id)).wallet.walletName == "new"
    err = _error(lambda: client.delete_wallets(DeleteWalletsBody(walletIds=[wallet_id])))
    assert "deleteWithoutExport" in str(err)
    client.delete_wallets(DeleteWalletsBody(walletIds=[wallet_id], deleteWithoutExport=True))
    err = _error(lambda: client.get_wallet(GetWalletBody(walletId=wallet_id)))
    assert err.status_code == 404


def test_imported_wallet_signs_like_the_reference_derivation(deployment: Deployment) -> None:
    client = deployment.client()
    user_id = deployment.root.user_id
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    target = json.loads(bytes.fromhex(json.loads(init.importBundle)["data"]))["targetPublic"]
    mnemonic = hd.generate_mnemonic(24)
    encrypted = bundles.encrypt_to_bundle(bundles.join_wallet_plaintext(mnemonic, "pw"), target)
    imported = client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="pw", encryptedBundle=encrypted, accounts=[SOL]))
    expected = hd.derive_from_mnemonic(mnemonic, Curve.ED25519, SOL["path"], "pw")
    assert imported.addresses == [derive_address(Curve.ED25519, AddressFormat.SOLANA,
                                                 expected.public_key)]


def test_private_key_import_export_and_delete(deployment: Deployment) -> None:
    signer_key = _signer_key(deployment)
    client = deployment.client()
    user_id = deployment.root.user_id
    org_id = deployment.root.organization_id
    secret = bytes.fromhex("46" * 32)
    init = client.init_import_private_key(InitImportPrivateKeyBody(userId=user_id))
    target = bundles.verify_signed_bundle(init.importBundle, signer_key)["targetPublic"]
    imported = client.import_private_key(ImportPrivateKeyBody(
        userId=user_id, privateKeyName="imported-pk", curve="CURVE_SECP256K1",
        addressFormats=["ADDRESS_FORMAT_ETHEREUM"],
        encryptedBundle=bundles.encrypt_to_bundle(secret, target)))
    assert imported.addresses[0].address == "0x9d8A62f656a8d1615C1294fd71e9CFb3E4855A4F"
    embedded = hpke.generate_private_key()
    target_hex = hpke.uncompressed(embedded.public_key()).hex()
    exported = client.export_private_key(ExportPrivateKeyBody(
        privateKeyId=imported.privateKeyId, targetPublicKey=target_hex))
    assert bundles.open_export_bundle(exported.exportBundle, embedded,
                                      signer_public_key_hex=signer_key,
                                      organization_id=org_id) == secret
    client.delete_private_keys(DeletePrivateKeysBody(privateKeyIds=[imported.privateKeyId]))
    err = _error(lambda: client.get_private_key(GetPrivateKeyBody(
        privateKeyId=imported.privateKeyId)))
    assert err.status_code == 404


def test_export_wallet_account_returns_the_account_key(deployment: Deployment) -> None:
    _, (eth, _sol) = _wallet(deployment, "acct-export")
    client = deployment.client()
    embedded = hpke.generate_private_key()
    exported = client.export_wallet_account(ExportWalletAccountBody(
        address=eth, targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    key = bundles.open_export_bundle(exported.exportBundle, embedded,
                                     signer_public_key_hex=_signer_key(deployment),
                                     organization_id=deployment.root.organization_id)
    assert eth_keys.PrivateKey(key).public_key.to_checksum_address() == eth


def test_wallet_accounts_can_be_renamed_and_deleted(deployment: Deployment) -> None:
    wallet_id, (eth, sol) = _wallet(deployment, "acct-ops")
    client = deployment.client()
    accounts = client.get_wallet_accounts(GetWalletAccountsBody(walletId=wallet_id)).accounts
    body = json.dumps({
        "type": "ACTIVITY_TYPE_UPDATE_WALLET_ACCOUNT_NAME",
        "timestampMs": str(int(time.time() * 1000)),
        "organizationId": deployment.root.organization_id,
        "parameters": {"walletAccountId": accounts[0].walletAccountId, "name": "savings"}})
    stamp = client.stamper.stamp(body)
    renamed = deployment.post("/public/v1/submit/update_wallet_account_name", body,
                              {stamp.stamp_header_name: stamp.stamp_header_value})
    assert renamed.status_code == 200, renamed.text
    one = client.get_wallet_account(GetWalletAccountBody(walletId=wallet_id, address=eth)).account
    assert one.name == "savings"
    err = _error(lambda: client.delete_wallet_accounts(DeleteWalletAccountsBody(
        walletAccountIds=[accounts[1].walletAccountId])))
    assert "deleteWithoutExport" in str(err)
    client.delete_wallet_accounts(DeleteWalletAccountsBody(
        walletAccountIds=[accounts[1].walletAccountId], deleteWithoutExport=True))
    left = client.get_wallet_accounts(GetWalletAccountsBody(walletId=wallet_id)).accounts
    assert [a.address for a in left] == [eth]
    assert sol not in {a.address for a in left}
