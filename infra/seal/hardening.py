"""Keep the root key out of core files and away from same-user debuggers.

A process that holds (or may come to hold) the root key calls :func:`harden_process` at its
start: no core file (``RLIMIT_CORE`` 0, soft and hard) and not dumpable
(``prctl(PR_SET_DUMPABLE, 0)``: no core dump either, ``ptrace`` by another process of the same
user is refused, and ``/proc/<pid>/`` files such as ``environ`` and ``mem`` belong to root).
Both survive ``fork`` (gunicorn's workers); a new program (``exec``, multiprocessing's spawn)
is dumpable again, so each entry point calls this itself. On systems without ``prctl`` only the
core limit applies, and that is logged once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import resource
import sys
from typing import Any

log = logging.getLogger("walletd.seal")

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3

_warned = False


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return getattr(libc, "prctl", None)


def harden_process() -> None:
    """No core files and not dumpable, for this process and the ones it forks."""
    global _warned
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    prctl = _prctl()
    if prctl is None:
        if not _warned:
            _warned = True
            log.warning("seal: %s has no prctl(PR_SET_DUMPABLE): core files are off but the "
                        "process stays dumpable", sys.platform)
        return
    if prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def dumpable() -> bool:
    """Whether this process is dumpable (``True`` where ``prctl`` does not exist)."""
    prctl = _prctl()
    return prctl is None or prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0
