"""SIGTERM and Ctrl-C: in-flight work finishes or is redelivered, and processes exit promptly.

- ``walletd up`` exits soon after SIGINT/SIGTERM (the pools stop together), and starts without
  dramatiq's duplicate-middleware warnings.
- An executor group SIGTERMed while an activity is inside its transaction (held there by a
  row lock the test owns, as in ``test_crash_recovery``) lets it finish and exits cleanly; past
  ``WALLETD_SHUTDOWN_TIMEOUT_S`` it exits without acknowledging, and the broker redelivers the
  message to the restarted group. Other activities submitted meanwhile all settle, each once.
- The ingress SIGTERMed while a submit waits for its activity still answers that request.

The only time bound asserted is functional (the process exits at all within a generous
limit); the measured times are printed (``pytest -s``).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import requests
from turnkey_sdk_types import CreateApiKeysBody, GetActivityBody, GetApiKeysBody

from tests.support.deployment import ROOT, WALLETD, Deployment, _env, free_port
from tests.support.keys import make_key

SHUTDOWN_TIMEOUT_S = 6
EXIT_BOUND_S = 10  # generous: a functional bound (it exits at all), not a benchmark
PENDING = "ACTIVITY_STATUS_PENDING"
COMPLETED = "ACTIVITY_STATUS_COMPLETED"


# -- walletd up ---------------------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_walletd_up_starts_quietly_and_stops_promptly(tmp_path: Path, sig: signal.Signals) -> None:
    port = free_port()
    data = tmp_path / "data"
    proc = subprocess.Popen([*WALLETD, "up", "--data-dir", str(data), "--port", str(port)],
                            env=_env({"WALLETD_DATA_DIR": str(data)}), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    printed = []
    try:
        for line in proc.stdout:
            printed.append(line)
            if "walletd listening on" in line:
                break
        assert requests.get(f"http://127.0.0.1:{port}/ready", timeout=30).status_code == 200
        started = time.monotonic()
        proc.send_signal(sig)
        rc = proc.wait(EXIT_BOUND_S)
        print(f"walletd up exited {time.monotonic() - started:.2f} s after {sig.name}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    printed.append(proc.stdout.read())
    output = "".join(printed)
    assert rc == 0, output
    assert "same type twice" not in output
    assert output.count("Worker has been shut down.") == 4  # every pool stopped cleanly


# -- production: executors and ingress ----------------------------------------------------------

@pytest.fixture(scope="module")
def draining(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    from tests.support import services

    db = services.create_database()
    vhost = services.create_vhost()
    dep = Deployment.production(tmp_path_factory.mktemp("draining"), db, vhost, extra_env={
        "WALLETD_SHUTDOWN_TIMEOUT_S": str(SHUTDOWN_TIMEOUT_S), "WALLETD_SYNC_WAIT_MS": "2500"})
    yield dep
    dep.stop()
    services.drop_database(db)
    services.delete_vhost(vhost)


def _wait(predicate, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


def _submit_key(dep: Deployment, name: str) -> tuple[str, str]:
    """Submit a create_api_keys; returns (activity id, the new key's public key)."""
    key = make_key()
    signed = dep.client().stamp_create_api_keys(CreateApiKeysBody(
        userId=dep.root.user_id, apiKeys=[key.api_key_params(name, "3600")]))
    headers = {signed.stamp.stamp_header_name: signed.stamp.stamp_header_value}
    answer = dep.post("/public/v1/submit/create_api_keys", signed.body, headers)
    assert answer.status_code == 200, answer.text
    return answer.json()["activity"]["id"], key.public_key


def _settled_once(dep: Deployment, submitted: list[tuple[str, str]]) -> None:
    """Every activity COMPLETED and each key exists exactly once."""
    client = dep.client()

    def all_completed() -> bool:
        return all(client.get_activity(GetActivityBody(activityId=a)).activity.status.value
                   == COMPLETED for a, _ in submitted)

    _wait(all_completed)
    keys = [k.credential.publicKey
            for k in client.get_api_keys(GetApiKeysBody(userId=dep.root.user_id)).apiKeys]
    for _, public_key in submitted:
        assert keys.count(public_key) == 1


def _executor_blocked_on(db_url: str) -> bool:
    """An executor waits for a lock in this database (only the test holds one: its claim of
    the activity, whatever statement the claim is)."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database() "
            "AND application_name LIKE 'walletd-worker[%%signing%%'").fetchone()
        return bool(row and row[0] >= 1)


def _held_mid_transaction(dep: Deployment, name: str) -> tuple[str, str, psycopg.Connection]:
    """An activity the executor group has received and is blocked on inside its transaction
    (the returned connection holds the row lock; roll it back to release)."""
    db_url = dep.env["WALLETD_DATABASE_URL"]
    dep.kill("executors")
    activity_id, public_key = _submit_key(dep, name)
    lock = psycopg.connect(db_url)
    lock.execute("SELECT id FROM activities WHERE id = %s FOR UPDATE", (activity_id,))
    dep.start_worker("executors")
    _wait(lambda: _executor_blocked_on(db_url))
    return activity_id, public_key, lock


def _submit_many(dep: Deployment, prefix: str, count: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    threads = [threading.Thread(target=lambda i=i: out.append(_submit_key(dep, f"{prefix}{i}")))
               for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(out) == count
    return out


def test_sigterm_lets_the_in_flight_activity_finish(draining: Deployment) -> None:
    dep = draining
    held_id, held_key, lock = _held_mid_transaction(dep, "in-flight")
    load = _submit_many(dep, "load-a", 8)
    proc = dep.processes["executors"]
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    time.sleep(1.0)            # stopping, and still waiting for the in-flight message
    assert proc.poll() is None
    lock.rollback()            # the activity's transaction goes on and commits
    lock.close()
    rc = proc.wait(SHUTDOWN_TIMEOUT_S + EXIT_BOUND_S)
    print(f"executors exited {time.monotonic() - started:.2f} s after SIGTERM "
          f"(1 s of it held by the test's lock)")
    assert rc == 0
    assert "Worker has been shut down." in dep.log("executors")
    status = dep.client().get_activity(GetActivityBody(activityId=held_id)).activity.status.value
    assert status == COMPLETED  # finished by the stopping process itself
    dep.start_worker("executors")
    _settled_once(dep, [(held_id, held_key), *load])


def test_sigterm_past_the_timeout_leaves_the_message_to_be_redelivered(draining: Deployment) -> None:
    dep = draining
    held_id, held_key, lock = _held_mid_transaction(dep, "redelivered")
    load = _submit_many(dep, "load-b", 8)
    proc = dep.processes["executors"]
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(SHUTDOWN_TIMEOUT_S + EXIT_BOUND_S)  # exits although the message runs on
    finally:
        lock.rollback()
        lock.close()
    print(f"executors exited {time.monotonic() - started:.2f} s after SIGTERM "
          f"(shutdown timeout {SHUTDOWN_TIMEOUT_S} s)")
    assert rc == 0
    status = dep.client().get_activity(GetActivityBody(activityId=held_id)).activity.status.value
    assert status == PENDING  # nothing was committed, nor acknowledged
    dep.start_worker("executors")
    _settled_once(dep, [(held_id, held_key), *load])


def test_ingress_sigterm_answers_the_request_in_flight(draining: Deployment) -> None:
    dep = draining
    dep.kill("executors")  # the submit waits its whole sync window for a settle that won't come
    answers: list[requests.Response] = []
    key = make_key()
    signed = dep.client().stamp_create_api_keys(CreateApiKeysBody(
        userId=dep.root.user_id, apiKeys=[key.api_key_params("drained", "3600")]))
    headers = {signed.stamp.stamp_header_name: signed.stamp.stamp_header_value}
    request = threading.Thread(target=lambda: answers.append(
        dep.post("/public/v1/submit/create_api_keys", signed.body, headers)))
    request.start()
    _wait(lambda: _activity_exists(dep, key.public_key), timeout=30)
    proc = dep.processes["ingress"]
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    request.join(60)
    rc = proc.wait(SHUTDOWN_TIMEOUT_S + EXIT_BOUND_S)
    print(f"ingress exited {time.monotonic() - started:.2f} s after SIGTERM with a request in flight")
    assert rc == 0
    assert len(answers) == 1 and answers[0].status_code == 200, answers
    activity = answers[0].json()["activity"]
    assert activity["status"] == PENDING
    # Back up: the activity completes once.
    dep._spawn("ingress", [*WALLETD, "ingress"])
    dep.start_worker("executors")
    dep.wait_ready()
    _settled_once(dep, [(activity["id"], key.public_key)])


def _activity_exists(dep: Deployment, public_key: str) -> bool:
    with psycopg.connect(dep.env["WALLETD_DATABASE_URL"], autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM activities WHERE body LIKE %s",
                           (f"%{public_key}%",)).fetchone()
        return bool(row and row[0])


if sys.platform == "win32":  # pragma: no cover
    pytest.skip("POSIX signals", allow_module_level=True)
