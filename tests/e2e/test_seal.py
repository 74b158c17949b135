"""The seal on the production path (gunicorn, worker processes, PostgreSQL, RabbitMQ).

- transit against a real OpenBao: the workers unseal themselves and sign; with OpenBao
  paused (SIGSTOP) a restarted signing worker stays sealed, says why (``/ready`` 503,
  ``walletd_sealed 1``), and every request gets a clear answer (PENDING, never a 500); once
  OpenBao resumes the worker unseals itself and the PENDING activities complete, once each.
- shamir: the workers start sealed; ``walletd operator unseal`` with 3 of the 5 shares
  printed by ``walletd operator init`` unseals them, and the activity submitted while sealed
  completes; ``walletd operator seal`` seals them again.
- after both: the secret scan. No file of the data dir, no row of a ``pg_dump``, no log line
  holds the root key, a master key, a data key (hex, base64, base64url, raw) or a share.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from eth_keys import keys as eth_keys
from eth_utils import keccak
from sqlalchemy import text
from turnkey_sdk_types import CreateWalletBody, SignRawPayloadBody

from infra.crypto.envelope import EnvelopeCipher
from infra.db.engine import make_engine, make_session_factory
from infra.seal import operations, sealed_file, shares
from infra.seal.config import SealConfig
from infra.seal.seals import ShamirSeal
from infra.settings import Settings
from infra.wallets.custody import row_context, sealed_rows
from tests.support import services
from tests.support.deployment import ROOT, WALLETD, Deployment, database_url
from tests.support.seal_servers import Transit, openbao

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}
SIGN = "/public/v1/submit/sign_raw_payload"
CREATE_WALLET = "/public/v1/submit/create_wallet"


@pytest.fixture
def backing() -> Iterator[tuple[str, str]]:
    db, vhost = services.create_database(), services.create_vhost()
    yield db, vhost
    services.drop_database(db)
    services.delete_vhost(vhost)


def _operator(dep: Deployment, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALLETD, "operator", *args], env=dep.env, cwd=ROOT, text=True,
                          input=stdin, capture_output=True, timeout=120)


def _status(dep: Deployment) -> dict[str, Any]:
    done = _operator(dep, "status")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _health(dep: Deployment, group: str) -> subprocess.CompletedProcess[str]:
    """``walletd health --role worker --ready`` as a container probe runs it."""
    return subprocess.run([*WALLETD, "health", "--role", "worker", "--ready"],
                          env={**dep.env, "WALLETD_METRICS_PORT": str(dep.metrics_ports[group])},
                          cwd=ROOT, text=True, capture_output=True, timeout=60)


def _raw_submit(dep: Deployment, path: str, activity_type: str,
                parameters: dict[str, Any]) -> requests.Response:
    body = json.dumps({"type": activity_type, "timestampMs": str(int(time.time() * 1000)),
                       "organizationId": dep.root.organization_id, "parameters": parameters})
    stamp = dep.client().stamper.stamp(body)
    return dep.post(path, body, {stamp.stamp_header_name: stamp.stamp_header_value})


def _sign_params(address: str, message: bytes) -> dict[str, Any]:
    return {"signWith": address, "payload": keccak(message).hex(),
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"}


def _check_signature(result: dict[str, Any], address: str, message: bytes) -> None:
    raw = bytes.fromhex(result["r"] + result["s"]) + bytes([int(result["v"], 16)])
    signer = eth_keys.Signature(raw).recover_public_key_from_msg_hash(keccak(message))
    assert signer.to_checksum_address() == address


def _sign(dep: Deployment, address: str, message: bytes) -> None:
    sig = dep.client().sign_raw_payload(SignRawPayloadBody(**_sign_params(address, message)))
    _check_signature({"r": sig.r, "s": sig.s, "v": sig.v}, address, message)


def _activity(dep: Deployment, activity_id: str) -> dict[str, Any]:
    body = json.dumps({"organizationId": dep.root.organization_id, "activityId": activity_id})
    stamp = dep.client().stamper.stamp(body)
    answer = dep.post("/public/v1/query/get_activity", body,
                      {stamp.stamp_header_name: stamp.stamp_header_value})
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["activity"])


def _seal_status(dep: Deployment, until: Any = None, timeout: float = 30) -> dict[str, Any]:
    """``get_seal_status`` through the ingress (what the console shows), once ``until`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        body = json.dumps({"organizationId": dep.root.organization_id})
        stamp = dep.client().stamper.stamp(body)
        answer = dep.post("/public/v1/query/get_seal_status", body,
                          {stamp.stamp_header_name: stamp.stamp_header_value})
        assert answer.status_code == 200, answer.text
        status = dict(answer.json())
        if until is None or until(status) or time.monotonic() > deadline:
            return status
        time.sleep(0.5)


def _wait_settled(dep: Deployment, activity_id: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        activity = _activity(dep, activity_id)
        if activity["status"] != "ACTIVITY_STATUS_PENDING":
            return activity
        time.sleep(0.3)
    raise AssertionError(f"activity {activity_id} still PENDING")


def _worker_ready(dep: Deployment, group: str) -> requests.Response:
    return requests.get(f"http://127.0.0.1:{dep.metrics_ports[group]}/ready", timeout=5)


def _wait_worker(dep: Deployment, group: str, ready: bool, timeout: float = 90) -> requests.Response:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = _worker_ready(dep, group)
            if (last.status_code == 200) == ready and "seal" in last.json()["checks"]:
                return last
        except requests.RequestException as ex:
            last = ex
        time.sleep(0.3)
    raise AssertionError(f"{group} never became {'ready' if ready else 'sealed'}: {last}\n"
                         f"{dep.log(group)}")


def _signed_after_pending(dep: Deployment, answer: requests.Response, address: str,
                          message: bytes) -> str:
    assert answer.status_code == 200, answer.text
    activity = answer.json()["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_PENDING"
    return str(activity["id"])


def test_transit_production_path_pauses_and_resumes(backing: tuple[str, str], tmp_path: Path) -> None:
    with openbao(tmp_path / "bao") as transit:
        dep = Deployment.production(tmp_path, *backing, extra_env={
            **transit.env(), "WALLETD_SYNC_WAIT_MS": "2000"})
        try:
            _transit_scenario(dep, transit)
            _secret_scan(dep, [])
        finally:
            dep.stop()


def _transit_scenario(dep: Deployment, transit: Transit) -> None:
    assert dep.seal_init["recovery"] and len(dep.seal_init["shares"]) == 5
    status = _status(dep)
    assert status["type"] == "transit" and status["initialized"] and not status["sealed"]
    created = dep.client().create_wallet(CreateWalletBody(walletName="sealed", accounts=[ETH]))
    address = created.addresses[0]
    _sign(dep, address, b"before the pause")
    assert _worker_ready(dep, "executors").json()["checks"]["seal"] == "ok"

    os.kill(transit.server.pid, signal.SIGSTOP)
    try:
        dep.kill("executors")
        dep.start_worker("executors")
        sealed = _wait_worker(dep, "executors", ready=False)
        assert sealed.status_code == 503
        assert "unreachable" in sealed.json()["checks"]["seal"]
        metrics = requests.get(dep.metrics_url("executors"), timeout=5).text
        assert any(line.startswith("walletd_sealed{") and line.endswith(" 1.0")
                   for line in metrics.splitlines()), metrics
        # Every request gets a clear answer, none a 500: PENDING within the sync wait.
        pending = [_signed_after_pending(dep, _raw_submit(
            dep, SIGN, "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", _sign_params(address, m)), address, m)
            for m in (b"while paused 1", b"while paused 2")]
        wallet = _raw_submit(dep, CREATE_WALLET, "ACTIVITY_TYPE_CREATE_WALLET",
                             {"walletName": "while paused", "accounts": [ETH]})
        assert wallet.status_code == 200 and wallet.json()["activity"]["status"] == \
            "ACTIVITY_STATUS_PENDING"
        bad = _raw_submit(dep, SIGN, "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {"signWith": address})
        assert bad.status_code == 400  # validation still answers at once
        # The official client polls a PENDING activity to completion.
        results: list[Any] = []
        client = dep.client(polling_interval_ms=250, max_polling_retries=400)
        poller = threading.Thread(target=lambda: results.append(client.sign_raw_payload(
            SignRawPayloadBody(**_sign_params(address, b"polled through the pause")))))
        poller.start()
        assert _status(dep)["sealed"]
    finally:
        os.kill(transit.server.pid, signal.SIGCONT)
    _wait_worker(dep, "executors", ready=True)
    for activity_id, message in zip(pending, (b"while paused 1", b"while paused 2"), strict=True):
        done = _wait_settled(dep, activity_id)
        assert done["status"] == "ACTIVITY_STATUS_COMPLETED", done
        _check_signature(done["result"]["signRawPayloadResult"], address, message)
    wallet_done = _wait_settled(dep, wallet.json()["activity"]["id"])
    assert wallet_done["status"] == "ACTIVITY_STATUS_COMPLETED"
    poller.join(120)
    assert results, "the official client did not complete"
    sig = results[0]
    _check_signature({"r": sig.r, "s": sig.s, "v": sig.v}, address, b"polled through the pause")
    _sign(dep, address, b"after the pause")
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with engine.connect() as conn:  # nothing duplicated: one activity per request
            count = conn.execute(text("SELECT count(*) FROM activities WHERE type LIKE "
                                      "'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD%'")).scalar()
        assert count == 5
    finally:
        engine.dispose()


def test_shamir_production_path_unsealed_by_three_of_five(backing: tuple[str, str],
                                                          tmp_path: Path) -> None:
    dep = Deployment.production(tmp_path, *backing, extra_env={
        "WALLETD_SEAL": "shamir", "WALLETD_SYNC_WAIT_MS": "1500"})
    try:
        given = dep.seal_init["shares"]
        assert len(given) == 5 and dep.seal_init["threshold"] == 3
        assert not dep.seal_init["recovery"]
        _wait_worker(dep, "executors", ready=False)
        status = _status(dep)
        assert status["sealed"] and status["type"] == "shamir" and status["threshold"] == 3
        assert status["progress"] == 0 and len(status["processes"]) >= 3
        health = _health(dep, "executors")
        assert health.returncode == 1 and "sealed" in health.stderr, health
        # The console's seal state: every worker process reports it, sealed, through the
        # database (the ingress holds no seal).
        reported = _seal_status(dep, lambda s: len(s["processes"]) >= 3)
        assert reported["sealed"] is True and reported["sealType"] == "shamir"
        assert reported["threshold"] == 3 and len(reported["processes"]) >= 3
        assert not any(share in json.dumps(reported) for share in given)
        wallet = _raw_submit(dep, CREATE_WALLET, "ACTIVITY_TYPE_CREATE_WALLET",
                             {"walletName": "made while sealed", "accounts": [ETH]})
        assert wallet.status_code == 200
        assert wallet.json()["activity"]["status"] == "ACTIVITY_STATUS_PENDING"
        bad = _operator(dep, "unseal", given[0].replace(given[0].split()[3], "academic", 1))
        assert bad.returncode == 1 and "checksum" in bad.stdout + bad.stderr
        for i, share in enumerate((given[4], given[1], given[2]), 1):
            done = _operator(dep, "unseal", "-", stdin=share + "\n")
            assert done.returncode == 0, done.stdout + done.stderr
            after = json.loads(done.stdout)
            assert after["sealed"] == (i < 3), after
            if i < 3:
                assert after["progress"] == i
        _wait_worker(dep, "executors", ready=True)
        assert _health(dep, "executors").returncode == 0
        unsealed = _seal_status(dep, lambda s: s["sealed"] is False)
        assert unsealed["sealed"] is False and unsealed["rootKeyVersion"] == 1
        assert all(not p["sealed"] for p in unsealed["processes"]), unsealed
        made = _wait_settled(dep, wallet.json()["activity"]["id"])
        assert made["status"] == "ACTIVITY_STATUS_COMPLETED", made
        address = made["result"]["createWalletResult"]["addresses"][0]
        _sign(dep, address, b"after unsealing")
        sealed = _operator(dep, "seal")
        assert sealed.returncode == 0 and json.loads(sealed.stdout)["sealed"]
        _wait_worker(dep, "executors", ready=False)
        for share in given[:3]:
            assert _operator(dep, "unseal", share).returncode == 0
        _wait_worker(dep, "executors", ready=True)
        _sign(dep, address, b"unsealed again")
        # ``walletd operator init`` (before the first migration) is a leaf of the audit log
        # once the consensus worker runs: its seal type and threshold, no share.
        initialised = _seal_event_leaves(dep, "SEAL_INITIALISED")
        assert len(initialised) == 1 and initialised[0]["details"]["threshold"] == 3
        assert initialised[0]["details"]["sealType"] == "shamir"
        assert not any(share in json.dumps(initialised) for share in given)
        _secret_scan(dep, given)
    finally:
        dep.stop()


def _seal_event_leaves(dep: Deployment, event: str, timeout: float = 30) -> list[dict[str, Any]]:
    """The leaves (staged or appended) of ``event``, once there is one."""
    engine = make_engine(database_url(dep))
    try:
        deadline = time.monotonic() + timeout
        while True:
            with engine.connect() as conn:
                rows = conn.execute(text(
                    "SELECT entry FROM audit_staged UNION ALL SELECT data FROM audit_leaves"))
                found = [leaf for leaf in (json.loads(row[0]) for row in rows)
                         if leaf.get("kind") == "key" and leaf.get("event") == event]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.5)
    finally:
        engine.dispose()


def _root_key(dep: Deployment, given: list[str]) -> bytes:
    settings = Settings.from_env(dep.env)
    current = sealed_file.read(settings.effective_keyring_file)
    assert current is not None
    if current.seal_type == "shamir":
        return ShamirSeal(shares.combine(given[:3])).unwrap(current.wrapped_root,
                                                            current.deployment)
    return operations.auto_root(SealConfig.from_env(dep.env, settings.data_dir,
                                                    settings.effective_keyring_file), current)


def _secret_scan(dep: Deployment, given: list[str]) -> None:
    """No root key, master key, data key (nor share) in the data dir, a pg_dump, or a log."""
    root = _root_key(dep, given)
    settings = Settings.from_env(dep.env)
    contents = sealed_file.read(settings.effective_keyring_file).open(root)  # type: ignore[union-attr]
    secrets: dict[str, bytes] = {"root key": root}
    for version, key in contents.master.keys.items():
        secrets[f"master key v{version}"] = key.key_secret
    engine = make_engine(database_url(dep), pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            envelope = EnvelopeCipher(contents.master)
            for row in sealed_rows(session):
                secrets[f"data key {row_context(row).decode()}"] = envelope.unwrap_data_key(
                    row.wrapped_key, row_context(row))
    finally:
        engine.dispose()
    assert sum(name.startswith("data key") for name in secrets) >= 5  # wallets, service keys
    needles: dict[str, bytes] = {}
    for name, secret in secrets.items():
        needles[f"{name} (raw)"] = secret
        needles[f"{name} (hex)"] = secret.hex().encode()
        whole = len(secret) // 3 * 4
        needles[f"{name} (base64)"] = base64.b64encode(secret)[:whole]
        needles[f"{name} (base64url)"] = base64.urlsafe_b64encode(secret)[:whole]
    for i, share in enumerate(given):
        needles[f"share {i + 1}"] = share.encode()
        needles[f"share {i + 1} words"] = " ".join(share.split()[:5]).encode()
    url = database_url(dep).replace("postgresql+psycopg://", "postgresql://")
    dump = subprocess.run(["pg_dump", "--data-only", url], capture_output=True, check=True,
                          timeout=120).stdout
    assert b"wk1." in dump  # the dump holds the wrapped data keys
    data = Path(dep.env["WALLETD_DATA_DIR"])
    files = {str(p): p.read_bytes() for p in data.rglob("*") if p.is_file() and not p.is_socket()}
    assert any(b"walletd-sealed-keyring/1" in b for b in files.values())
    logs = {p.name: p.read_bytes() for p in dep.workdir.glob("*.log")}
    assert sum(len(b) for b in logs.values()) > 1000
    haystacks = {"pg_dump": dump, **{f"file {k}": v for k, v in files.items()},
                 **{f"log {k}": v for k, v in logs.items()}}
    for where, haystack in haystacks.items():
        lowered = haystack.lower()
        for what, needle in needles.items():
            assert needle not in haystack and needle.lower() not in lowered, \
                f"{what} found in {where}"
