"""`walletd audit verify` and `walletd audit witness` against running deployments (embedded
and production), as a customer and an operator would run them (issue 22)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.support.deployment import ROOT, WALLETD, Deployment
from tests.support.raw_api import stamp_headers

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


def _audit(dep: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALLETD, "audit", *args], env=dep.env, cwd=ROOT, text=True,
                          capture_output=True, timeout=300)


def _query(dep: Deployment, path: str, body: dict[str, Any]) -> dict[str, Any]:
    raw = json.dumps({"organizationId": dep.root.organization_id, **body}).encode()
    response = dep.post(f"/public/v1/query/{path}", raw, stamp_headers(dep, dep.root, raw))
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _checkpointed(dep: Deployment, activity_id: str) -> dict[str, Any]:
    """The activity's leaves once a checkpoint covers them (the worker signs every ~2 s)."""
    deadline = time.monotonic() + 120
    while True:
        try:
            answer = _query(dep, "get_audit_inclusion_proof", {"activityId": activity_id})
            if answer["leaves"] and not answer["pendingLeaves"]:
                return answer
        except AssertionError:  # no checkpoint yet (404)
            if time.monotonic() > deadline:
                raise
        assert time.monotonic() < deadline, "no checkpoint covered the activity"
        time.sleep(0.5)


def test_verify_and_witness_a_running_deployment(deployment: Deployment, tmp_path: Path) -> None:
    client = deployment.client()
    from turnkey_sdk_types import CreateWalletBody, SignRawPayloadBody

    wallet = client.create_wallet(CreateWalletBody(walletName=f"audit-{time.time_ns()}",
                                                   accounts=[ETH]))
    signed = client.sign_raw_payload(SignRawPayloadBody(
        signWith=wallet.addresses[0], payload="cd" * 32,
        encoding="PAYLOAD_ENCODING_HEXADECIMAL", hashFunction="HASH_FUNCTION_NO_OP"))
    leaves = _checkpointed(deployment, signed.activity.id)["leaves"]
    statuses = [json.loads(leaf["leafData"])["status"] for leaf in leaves]
    assert statuses == ["ACTIVITY_STATUS_PENDING", "ACTIVITY_STATUS_COMPLETED"]

    key_file = deployment.workdir / "data" / "root-api-key.json"
    state = tmp_path / "customer.json"
    done = _audit(deployment, "verify", "--url", deployment.base_url, "--key-file", str(key_file),
                  "--state", str(state))
    assert done.returncode == 0, done.stderr
    assert "consistent" in done.stdout
    assert json.loads(state.read_text())["treeSize"] > 0

    witness = tmp_path / "witness.json"
    for _ in range(2):  # first contact pins the key; the second checks an extension
        done = _audit(deployment, "witness", deployment.base_url, "--once", "--state",
                      str(witness))
        assert done.returncode == 0, done.stderr
        assert "accepted checkpoint" in done.stdout

    # The operator's check of the whole database (the deployment's own settings: its
    # WALLETD_DATABASE_URL, or the embedded data dir's SQLite), with every other test's
    # activities of this session in it.
    done = _audit(deployment, "verify", "--state", str(tmp_path / "operator.json"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok:")
