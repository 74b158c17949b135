"""prometheus-client's multiprocess mode for supervisors (gunicorn master, ``walletd worker``).

Must run before :mod:`infra.observability.metrics` (or ``prometheus_client``) is imported in
the process, so this module imports neither.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Final

ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
_PREFIX: Final = "walletd-metrics-"


def use_dir() -> str:
    """Make this process and the workers it starts share a fresh metrics directory, unless
    the operator set ``PROMETHEUS_MULTIPROC_DIR`` (then that one, emptied by the operator)."""
    path = os.environ.get(ENV)
    if not path:
        path = tempfile.mkdtemp(prefix=_PREFIX)
        os.environ[ENV] = path
    os.makedirs(path, exist_ok=True)
    return path


def forget_dir(path: str) -> None:
    """Remove a directory :func:`use_dir` created (never the operator's)."""
    if os.path.basename(path).startswith(_PREFIX):
        shutil.rmtree(path, ignore_errors=True)


def process_exited(pid: int) -> None:
    """A worker process ended: drop its live gauges (in-progress messages)."""
    if os.environ.get(ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
