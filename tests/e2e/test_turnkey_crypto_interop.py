"""Bundles interoperate with the official ``@turnkey/crypto`` (2.13.2) via its override argument.

The JS side runs under Node (``tests/interop``; installed with ``npm install`` on first use).
Without Node/npm, or without registry access, these tests skip.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import requests
from eth_keys import keys as eth_keys
from turnkey_sdk_types import (
    ExportPrivateKeyBody,
    ExportWalletBody,
    ImportPrivateKeyBody,
    ImportWalletBody,
    InitImportPrivateKeyBody,
    InitImportWalletBody,
)

from infra.crypto import hd, hpke
from tests.support.deployment import Deployment
from tests.support.interop import INTEROP, node_with, run_script

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


@pytest.fixture(scope="module")
def node() -> str:
    return node_with("@turnkey/crypto")


def _js(node: str, **request: Any) -> str:
    return str(run_script(node, "turnkey_crypto.mjs", request, timeout=60)["result"])


def _signer(dep: Deployment) -> str:
    return str(requests.get(dep.base_url + "/public/v1/discovery/keys", timeout=10)
               .json()["signerPublicKey"])


def test_wallet_import_and_export_through_turnkey_crypto(node: str, deployment: Deployment) -> None:
    client = deployment.client()
    org_id, user_id = deployment.root.organization_id, deployment.root.user_id
    signer = _signer(deployment)
    mnemonic = hd.generate_mnemonic(12)
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    encrypted = _js(node, op="encryptWallet", mnemonic=mnemonic, importBundle=init.importBundle,
                    userId=user_id, organizationId=org_id, signer=signer)
    imported = client.import_wallet(ImportWalletBody(
        userId=user_id, walletName="js-import", encryptedBundle=encrypted, accounts=[ETH]))
    embedded = hpke.generate_private_key()
    exported = client.export_wallet(ExportWalletBody(
        walletId=imported.walletId,
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    decrypted = _js(node, op="decryptExport", exportBundle=exported.exportBundle,
                    embeddedKey=hpke.private_key_to_bytes(embedded).hex(),
                    organizationId=org_id, returnMnemonic=True, signer=signer)
    assert decrypted == mnemonic


def test_turnkey_crypto_rejects_bundles_signed_by_another_key(node: str,
                                                              deployment: Deployment) -> None:
    client = deployment.client()
    user_id = deployment.root.user_id
    init = client.init_import_wallet(InitImportWalletBody(userId=user_id))
    other = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
    done = subprocess.run(
        [node, str(INTEROP / "turnkey_crypto.mjs")], cwd=INTEROP, capture_output=True, text=True,
        timeout=60, input=json.dumps({
            "op": "encryptWallet", "mnemonic": hd.generate_mnemonic(), "userId": user_id,
            "importBundle": init.importBundle, "signer": other,
            "organizationId": deployment.root.organization_id}))
    assert done.returncode != 0


def test_private_key_import_and_export_through_turnkey_crypto(node: str,
                                                              deployment: Deployment) -> None:
    client = deployment.client()
    org_id, user_id = deployment.root.organization_id, deployment.root.user_id
    signer = _signer(deployment)
    secret = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
    init = client.init_import_private_key(InitImportPrivateKeyBody(userId=user_id))
    encrypted = _js(node, op="encryptPrivateKey", privateKey=secret, keyFormat="HEXADECIMAL",
                    importBundle=init.importBundle, userId=user_id, organizationId=org_id,
                    signer=signer)
    imported = client.import_private_key(ImportPrivateKeyBody(
        userId=user_id, privateKeyName="js-key", encryptedBundle=encrypted,
        curve="CURVE_SECP256K1", addressFormats=["ADDRESS_FORMAT_ETHEREUM"]))
    expected = eth_keys.PrivateKey(bytes.fromhex(secret)).public_key.to_checksum_address()
    assert imported.addresses[0].address == expected
    embedded = hpke.generate_private_key()
    exported = client.export_private_key(ExportPrivateKeyBody(
        privateKeyId=imported.privateKeyId,
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    decrypted = _js(node, op="decryptExport", exportBundle=exported.exportBundle,
                    embeddedKey=hpke.private_key_to_bytes(embedded).hex(),
                    organizationId=org_id, returnMnemonic=False, keyFormat="HEXADECIMAL",
                    signer=signer)
    assert decrypted.lower().removeprefix("0x") == secret
