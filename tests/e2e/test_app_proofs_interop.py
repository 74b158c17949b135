"""App proofs and boot records through the official clients (issue 22).

``generateAppProofs: true`` on a submission returns ``appProofs`` that the official
``@turnkey/crypto`` ``verifyAppProofSignature`` accepts unchanged (Node, ``tests/interop``);
``get_app_proofs`` (turnkey-http) serves them again; the boot record behind the per-boot key
is a walletd record signed by the log key, which ``@turnkey/crypto``'s Nitro ``verify``
refuses (it is not an attestation and must never pass for one).
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from turnkey_sdk_types import GetAppProofsBody, GetBootProofBody, GetLatestBootProofBody

from infra.audit import note
from tests.support.deployment import Deployment
from tests.support.interop import node_with, run_script
from tests.support.raw_api import stamp_headers

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


@pytest.fixture(scope="module")
def node() -> str:
    return node_with("@turnkey/crypto")


def _submit(dep: Deployment, path: str, type_: str, parameters: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"type": type_, "timestampMs": str(time.time_ns() // 1_000_000),
                       "organizationId": dep.root.organization_id, "parameters": parameters,
                       "generateAppProofs": True}, separators=(",", ":")).encode()
    response = dep.post(f"/public/v1/submit/{path}", body, stamp_headers(dep, dep.root, body))
    assert response.status_code == 200, response.text
    activity: dict[str, Any] = response.json()["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED", activity
    return activity


def test_app_proofs_verify_with_turnkey_crypto(node: str, deployment: Deployment) -> None:
    wallet = _submit(deployment, "create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                     {"walletName": f"proofs-{time.time_ns()}", "accounts": [ETH]})
    address = wallet["result"]["createWalletResult"]["addresses"][0]
    signed = _submit(deployment, "sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
        "signWith": address, "payload": "ab" * 32, "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
        "hashFunction": "HASH_FUNCTION_NO_OP"})
    derivation, = wallet["appProofs"]
    outcome, = signed["appProofs"]
    assert derivation["scheme"] == "SIGNATURE_SCHEME_EPHEMERAL_KEY_P256"
    payload = json.loads(derivation["proofPayload"])
    assert payload["type"] == "APP_PROOF_TYPE_ADDRESS_DERIVATION"
    assert payload["addresses"] == [address] and payload["activityId"] == wallet["id"]
    assert payload["walletdLeafEntryDigest"].startswith("sha256:")
    payload = json.loads(outcome["proofPayload"])
    assert payload["type"] == "APP_PROOF_TYPE_POLICY_OUTCOME"
    assert payload["policyOutcome"] and payload["activityId"] == signed["id"]

    client = deployment.client()
    served = client.get_app_proofs(GetAppProofsBody(activityId=signed["id"]))
    assert [p.model_dump(exclude_none=True) for p in served.appProofs] == [outcome]

    boot = client.get_boot_proof(GetBootProofBody(ephemeralKey=outcome["publicKey"])).bootProof
    latest = client.get_latest_boot_proof(GetLatestBootProofBody(appName="walletd")).bootProof
    assert latest.qosManifestVersion == "walletd-boot-record-v1"
    assert boot.awsAttestationDocB64 == "" and boot.enclaveApp == "walletd"
    record = base64.b64decode(boot.qosManifestB64)
    assert json.loads(record)["ephemeralPublicKey"] == outcome["publicKey"]
    envelope = json.loads(base64.b64decode(boot.qosManifestEnvelopeB64))
    keys = requests.get(deployment.base_url + "/public/v1/discovery/keys", timeout=10).json()
    assert envelope["verifierKey"] == keys["auditLogVerifierKey"]
    verifier = note.Verifier.parse(keys["auditLogVerifierKey"])
    Ed25519PublicKey.from_public_bytes(verifier.public).verify(
        base64.b64decode(envelope["signature"]), record)

    checked = run_script(node, "app_proofs.mjs", {
        "appProofs": [derivation, outcome], "bootProof": boot.model_dump(exclude_none=True)})
    assert checked["verified"] == 2
    assert checked["verifyPair"] and checked["verifyPair"] != "accepted"


def test_a_tampered_app_proof_fails_turnkey_crypto(node: str, embedded: Deployment) -> None:
    wallet = _submit(embedded, "create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                     {"walletName": f"tamper-{time.time_ns()}", "accounts": [ETH]})
    proof = dict(wallet["appProofs"][0])
    proof["proofPayload"] = proof["proofPayload"].replace("ADDRESS_DERIVATION", "POLICY_OUTCOME")
    with pytest.raises(AssertionError, match="Signature verification failed"):
        run_script(node, "app_proofs.mjs", {"appProofs": [proof]})
