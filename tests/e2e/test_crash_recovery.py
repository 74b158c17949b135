"""A worker killed mid-activity (SIGKILL) and restarted: the activity completes once.

"Mid-activity" is made real without hooks in the service: the test holds a row lock on
the activity in PostgreSQL, so the executor that received the message blocks inside its
transaction (message unacknowledged, claim in progress). pg_stat_activity proves it is
there; then the executor group is SIGKILLed, the lock released, the group restarted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from turnkey_sdk_types import CreateApiKeysBody, GetActivityBody, GetApiKeysBody

from tests.support.deployment import Deployment
from tests.support.keys import make_key


@pytest.fixture
def crashable(tmp_path: Path) -> Iterator[Deployment]:
    # Its own database schema would clash with the session deployment's; a fresh DB + vhost.
    from tests.support import services

    db = services.create_database()
    vhost = services.create_vhost()
    dep = Deployment.production(tmp_path, db, vhost, extra_env={"WALLETD_SYNC_WAIT_MS": "300"})
    yield dep
    dep.stop()
    services.drop_database(db)
    services.delete_vhost(vhost)


def _wait(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


def _submit_while_down(dep: Deployment, name: str) -> tuple[dict, bytes, dict[str, str], str]:
    """Submit a create_api_keys (a worker group is down): returns the PENDING activity,
    the signed body and headers (for replays), and the new key's public key."""
    key = make_key()
    signed = dep.client().stamp_create_api_keys(CreateApiKeysBody(
        userId=dep.root.user_id, apiKeys=[key.api_key_params(name, "3600")]))
    headers = {signed.stamp.stamp_header_name: signed.stamp.stamp_header_value}
    activity = dep.post("/public/v1/submit/create_api_keys", signed.body, headers).json()["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_PENDING"
    return activity, signed.body.encode(), headers, key.public_key


def _completes_once(dep: Deployment, activity_id: str, public_key: str) -> None:
    """The activity reaches COMPLETED and its effect (one API key) exists exactly once."""
    client = dep.client()

    def completed() -> bool:
        polled = client.get_activity(GetActivityBody(activityId=activity_id))
        return polled.activity.status.value == "ACTIVITY_STATUS_COMPLETED"

    _wait(completed)
    keys = client.get_api_keys(GetApiKeysBody(userId=dep.root.user_id)).apiKeys
    assert [k.credential.publicKey for k in keys].count(public_key) == 1


def test_executor_killed_mid_activity_completes_exactly_once(crashable: Deployment) -> None:
    dep = crashable
    db_url = dep.env["WALLETD_DATABASE_URL"]

    # Executors down: the activity is accepted and stays PENDING.
    dep.kill("executors")
    activity, body, headers, public_key = _submit_while_down(dep, "crash")

    with psycopg.connect(db_url) as lock_conn:
        lock_conn.execute("SELECT id FROM activities WHERE id = %s FOR UPDATE", (activity["id"],))
        dep.start_worker("executors")

        def executor_blocked_on_it() -> bool:
            # The pool's claim (SELECT activities.id AS a_id, … FOR UPDATE OF activities, plain
            # rows, infra.pipeline.store; pg_stat_activity shows
            # only the beginning of its text) waiting for the test's lock.
            with psycopg.connect(db_url, autocommit=True) as conn:
                rows = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database() "
                    "AND application_name LIKE 'walletd-worker[%%signing%%' "
                    "AND query ILIKE 'SELECT activities.id AS a_id, %%'").fetchone()
                return bool(rows and rows[0] >= 1)

        _wait(executor_blocked_on_it)
        dep.kill("executors")  # SIGKILL while it holds the unacked message mid-transaction
        lock_conn.rollback()

    dep.start_worker("executors")
    _completes_once(dep, activity["id"], public_key)
    # Replaying the same body still returns the one activity.
    again = dep.post("/public/v1/submit/create_api_keys", body, headers).json()["activity"]
    assert again["id"] == activity["id"] and again["status"] == "ACTIVITY_STATUS_COMPLETED"


def test_a_pool_down_when_the_activity_arrives_runs_it_once_when_back(
        crashable: Deployment) -> None:
    dep = crashable
    dep.kill("executors")
    activity, _, _, public_key = _submit_while_down(dep, "late")
    dep.start_worker("executors")
    _completes_once(dep, activity["id"], public_key)


def test_lost_broker_message_is_recovered_by_the_sweeper(crashable: Deployment) -> None:
    import pika

    dep = crashable
    dep.kill("executors")
    activity, _, _, public_key = _submit_while_down(dep, "lost")

    # Lose the message: purge the activity's own pool's queue, as if the broker had dropped
    # it. The one message per activity went there (nothing went through consensus).
    connection = pika.BlockingConnection(pika.URLParameters(dep.env["WALLETD_BROKER_URL"]))
    try:
        channel = connection.channel()
        assert channel.queue_declare("consensus", passive=True).method.message_count == 0
        channel.queue_purge("accounts")
        assert channel.queue_declare("accounts", passive=True).method.message_count == 0
    finally:
        connection.close()

    # The sweeper (in the consensus worker) re-sends it to the pool after its grace period.
    dep.start_worker("executors")
    _completes_once(dep, activity["id"], public_key)
