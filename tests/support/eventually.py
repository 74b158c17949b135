"""Waiting, bounded, for something another thread delivers (a database announcement reaching a
process's caches): retry a check until it passes or the deadline passes."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

#: What a failed check raises besides ``retry_on``: ``pytest.raises``'s "DID NOT RAISE" is
#: pytest's ``Failed``, which is no ``AssertionError``.
_FAILED: tuple[type[BaseException], ...] = (pytest.fail.Exception,)


def until_passes(check: Callable[[], None], *, timeout_s: float = 20.0,
                 retry_on: tuple[type[BaseException], ...] = (AssertionError,)) -> None:
    """Run ``check`` until it returns; re-raise its last failure after ``timeout_s``."""
    retry_on = (*retry_on, *_FAILED)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            check()
            return
        except retry_on:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
