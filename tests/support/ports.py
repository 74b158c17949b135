"""Loopback ports for the servers tests start.

``bind(("127.0.0.1", 0))`` hands out a port from the kernel's ephemeral range, the same range
every outgoing connection takes its source port from: by the time the server binds it, a
client socket of the same run may hold it (``Address already in use``), and ``walletd up``
also binds the port after it (the auth proxy's default is the API port + 1).

So test ports come from below the ephemeral range, each pytest-xdist worker from its own
slice of it, and a port is handed out only when it and the next one can both be bound.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

#: Test ports lie in [_LOWEST, the start of the ephemeral range).
_LOWEST = 20000
_FALLBACK_EPHEMERAL_START = 32768


def _ephemeral_start() -> int:
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        return max(int(text.split()[0]), _LOWEST + 1000)
    except (OSError, ValueError, IndexError):
        return _FALLBACK_EPHEMERAL_START


def worker_slot() -> tuple[int, int]:
    """This process's pytest-xdist worker index and the number of workers (0, 1 alone)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    index = int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0
    return index % max(count, 1), max(count, 1)


def _candidates() -> Iterator[int]:
    index, count = worker_slot()
    width = (_ephemeral_start() - _LOWEST) // count
    low = _LOWEST + index * width
    # Even ports only, so that P and P + 1 of one hand-out never overlap the next one; a
    # random start keeps two test runs side by side (a worktree's) apart as well.
    start = random.randrange(0, width // 2)
    for step in itertools.count():
        yield low + 2 * ((start + step) % (width // 2))


def _bindable(port: int) -> bool:
    try:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


_lock = threading.Lock()
_sequence: Iterator[int] | None = None


def free_port() -> int:
    """A loopback port P that nothing holds, with P + 1 free too."""
    global _sequence
    with _lock:
        if _sequence is None:
            _sequence = _candidates()
        for _ in range(5000):
            port = next(_sequence)
            if _bindable(port) and _bindable(port + 1):
                return port
    raise RuntimeError("no two consecutive free loopback ports below the ephemeral range")
