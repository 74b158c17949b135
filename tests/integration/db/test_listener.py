"""The process's ``LISTEN`` connection (``infra.db.listen``): channels subscribed before it
connects are listened on by that connection; only a channel added to a live connection
costs a reconnect (and the reset that tells subscribers notifications may have been missed).

A spurious reconnect wakes every waiting request for a status read it did not need; the
waiter subscribes two channels one after the other at start, which used to reconnect once
whenever the second came before the first connection was up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from infra.db.listen import Listener

WAIT_S = 10.0


class Recorder:
    def __init__(self) -> None:
        self.resets = 0
        self.payloads: list[str] = []
        self.arrived = threading.Event()

    def notify(self, payload: str) -> None:
        self.payloads.append(payload)
        self.arrived.set()

    def reset(self) -> None:
        self.resets += 1


def _dsn(url: str) -> str:
    return url.replace("+psycopg", "")


def _notify(url: str, channel: str, payload: str) -> None:
    with psycopg.connect(_dsn(url), autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))


@pytest.fixture
def listener(fresh_pg_url: str) -> Iterator[Listener]:
    found = Listener(_dsn(fresh_pg_url))
    yield found
    found.stop()


def test_channels_subscribed_before_the_connection_is_up_need_no_reconnect(
        listener: Listener, fresh_pg_url: str) -> None:
    first, second = Recorder(), Recorder()
    listener.subscribe("walletd_test_first", first.notify, first.reset)
    listener.subscribe("walletd_test_second", second.notify, second.reset)
    assert listener.connected.wait(WAIT_S)
    time.sleep(0.5)  # a reconnect, had one been asked for, happens within this
    assert (first.resets, second.resets) == (1, 1)
    assert listener.connected.is_set()
    _notify(fresh_pg_url, "walletd_test_second", "two")
    _notify(fresh_pg_url, "walletd_test_first", "one")
    assert second.arrived.wait(WAIT_S) and first.arrived.wait(WAIT_S)
    assert (first.payloads, second.payloads) == (["one"], ["two"])


def test_a_channel_added_to_a_live_connection_is_listened_on_after_one_reconnect(
        listener: Listener, fresh_pg_url: str) -> None:
    first, late = Recorder(), Recorder()
    listener.subscribe("walletd_test_first", first.notify, first.reset)
    assert listener.connected.wait(WAIT_S)
    time.sleep(0.3)
    listener.subscribe("walletd_test_late", late.notify, late.reset)
    deadline = time.monotonic() + WAIT_S
    while late.resets == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert listener.connected.wait(WAIT_S)
    assert first.resets >= 2  # the reconnect told the earlier subscriber too
    _notify(fresh_pg_url, "walletd_test_late", "late")
    assert late.arrived.wait(WAIT_S)
    assert late.payloads == ["late"]
