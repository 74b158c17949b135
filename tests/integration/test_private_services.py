"""Private PostgreSQL and RabbitMQ servers: they restart, keep their data, and leave nothing.

The chaos run restarts these (never the machine's shared servers); here each is restarted
once with committed data / a durable queue's persistent message in it, then closed: its
directory, its processes and its ports (RabbitMQ's private epmd included) must be gone.
"""

from __future__ import annotations

import socket

import pika
import psycopg
import pytest

from tests.support import private_services
from tests.support.services import CI


@pytest.fixture(autouse=True)
def _servers_available() -> None:
    reason = private_services.available()
    if reason:
        if CI:
            pytest.fail(f"private servers impossible under CI=true: {reason}")
        pytest.skip(reason)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_private_postgres_keeps_committed_rows_across_an_immediate_stop() -> None:
    pg = private_services.PrivatePostgres()
    try:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (v int)")
            conn.execute("INSERT INTO t VALUES (42)")
        pg.stop("immediate")
        assert not _listening(pg.port)
        pg.start()
        with psycopg.connect(pg.url) as conn:
            assert conn.execute("SELECT v FROM t").fetchall() == [(42,)]
    finally:
        pg.close()
    assert not pg.dir.exists() and not _listening(pg.port)


@pytest.mark.timeout(600)
def test_private_rabbit_keeps_a_persistent_message_across_a_restart() -> None:
    mq = private_services.PrivateRabbit()
    try:
        assert mq.port != 5672 and not mq.node.startswith("rabbit@")
        connection = pika.BlockingConnection(pika.URLParameters(mq.url))
        channel = connection.channel()
        channel.queue_declare("q", durable=True)
        channel.basic_publish("", "q", b"kept", pika.BasicProperties(delivery_mode=2))
        connection.close()
        mq.stop()
        assert not _listening(mq.port)
        mq.start()
        connection = pika.BlockingConnection(pika.URLParameters(mq.url))
        _, _, body = connection.channel().basic_get("q", auto_ack=True)
        connection.close()
        assert body == b"kept"
    finally:
        mq.close()
    assert not mq.dir.exists()
    assert not _listening(mq.port) and not _listening(mq.epmd_port)
