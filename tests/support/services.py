"""Reaching the real PostgreSQL, RabbitMQ and Redis on this machine.

Locally a missing service skips the tests that need it; under ``CI=true`` it fails them
loudly (dramatiq's rule). ``make test`` starts installed-but-stopped services first.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import uuid

import pytest

from tests.support.ports import worker_slot

PG_ADMIN_URL = os.environ.get("WALLETD_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
AMQP_HOST = os.environ.get("WALLETD_TEST_AMQP_HOST", "127.0.0.1")
REDIS_URL = os.environ.get("WALLETD_TEST_REDIS", "redis://127.0.0.1:6379")
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def require(name: str, host: str, port: int) -> None:
    """Skip (locally) or fail (CI) when a service is down."""
    if reachable(host, port):
        return
    message = f"{name} is not reachable on {host}:{port}"
    if CI:
        pytest.fail(message + " (CI=true: services must be up; run `make services`)")
    pytest.skip(message)


def create_database() -> str:
    """A fresh PostgreSQL database; returns its URL."""
    require("PostgreSQL", "127.0.0.1", 5432)
    import psycopg

    name = f"walletd_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def drop_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def create_vhost() -> str:
    """A fresh RabbitMQ virtual host (so parallel runs never share queues); returns a URL."""
    require("RabbitMQ", AMQP_HOST, 5672)
    vhost = f"walletd-test-{uuid.uuid4().hex[:12]}"
    # One CLI call (each starts an Erlang VM: half a second) where the node's internal API
    # allows it; otherwise the two documented commands.
    both = (f'rabbit_vhost:add(<<"{vhost}">>, <<"walletd-tests">>), '
            f'rabbit_auth_backend_internal:set_permissions(<<"guest">>, <<"{vhost}">>, '
            '<<".*">>, <<".*">>, <<".*">>, <<"walletd-tests">>).')
    done = subprocess.run(["rabbitmqctl", "-q", "eval", both], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0 or done.stdout.strip() != "ok":
        for cmd in (["rabbitmqctl", "-q", "add_vhost", vhost],
                    ["rabbitmqctl", "-q", "set_permissions", "-p", vhost, "guest", ".*", ".*",
                     ".*"]):
            subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    return f"amqp://guest:guest@{AMQP_HOST}:5672/{vhost}"


def delete_vhost(url: str) -> None:
    vhost = url.rsplit("/", 1)[1]
    subprocess.run(["rabbitmqctl", "-q", "delete_vhost", vhost], capture_output=True, timeout=60)


def redis_url() -> str:
    """A Redis URL on a random logical database of this pytest-xdist worker's own (tests
    that reset their database with FLUSHDB never empty another worker's)."""
    require("Redis", "127.0.0.1", 6379)
    index, count = worker_slot()
    own = [db for db in range(1, 16) if db % count == index]
    return f"{REDIS_URL}/{random.choice(own)}"
