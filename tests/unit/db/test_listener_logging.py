"""The LISTEN thread says once, with its traceback, that the database went away, then at
most one line per quiet period while it keeps retrying every second."""

from __future__ import annotations

import logging
import time

import pytest

from infra.db import listen


def test_an_unreachable_database_is_reported_once_then_quietly(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listen, "QUIET_S", 1.5)
    # Port 1 on loopback refuses at once: every attempt fails.
    listener = listen.Listener("postgresql://walletd@127.0.0.1:1/none?connect_timeout=1")
    with caplog.at_level(logging.WARNING, logger=listen.__name__):
        listener.subscribe("walletd_test", lambda _: None, lambda: None)
        thread = listener._thread
        assert thread is not None and thread.ident is not None
        time.sleep(4.5)  # about four attempts, a second apart
        listener.stop()
    # This listener's lines only: other tests' listeners may still be retrying in a full run.
    lines = [r for r in caplog.records
             if r.name == listen.__name__ and r.thread == thread.ident]
    assert not listener.connected.is_set()
    assert lines, "the first failure is reported"
    assert lines[0].exc_info is not None and "lost its connection" in lines[0].getMessage()
    later = lines[1:]
    assert all(r.exc_info is None and "still cannot connect" in r.getMessage() for r in later)
    # Four or five failures, but one line per 1.5 s after the first: at most two more.
    assert len(later) <= 2, [r.getMessage() for r in lines]
