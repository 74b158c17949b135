"""Running the official npm SDKs of ``tests/interop`` under Node for interop tests.

Without Node/npm, or without registry access, the tests skip locally; under ``CI=true`` they
must run, so they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

INTEROP = Path(__file__).resolve().parents[1] / "interop"


def unavailable(reason: str) -> None:
    """Skip locally; under CI=true the interop checks must run, so fail."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true requires the npm interop tests)")
    pytest.skip(reason)


def node_with(*packages: str) -> str:
    """The ``node`` executable, after ``npm install`` when one of ``packages`` is missing."""
    exe, npm = shutil.which("node"), shutil.which("npm")
    if not exe or not npm:
        unavailable("node/npm not installed")
    if not all((INTEROP / "node_modules" / p).is_dir() for p in packages):
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=INTEROP,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            unavailable(f"npm install failed: {done.stderr[-300:]}")
    assert exe is not None
    return exe


def run_script(node: str, script: str, request: dict[str, Any], timeout: int = 120) -> Any:
    """Run ``tests/interop/<script>`` with ``request`` as JSON on stdin; its stdout as JSON."""
    done = subprocess.run([node, str(INTEROP / script)], cwd=INTEROP, input=json.dumps(request),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
