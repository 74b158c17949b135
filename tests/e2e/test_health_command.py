"""``walletd health``: the probe command of the image's and compose's health checks."""

from __future__ import annotations

import subprocess

from tests.support.deployment import ROOT, WALLETD, Deployment, _env, free_port


def health(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALLETD, "health", *args], env=_env(env), cwd=ROOT, text=True,
                          capture_output=True, timeout=60)


def test_health_of_the_api_and_of_a_worker_role(production: Deployment) -> None:
    api_port = production.base_url.rsplit(":", 1)[1]
    assert health({"WALLETD_PORT": api_port}).returncode == 0
    ready = health({"WALLETD_PORT": api_port}, "--ready")
    assert ready.returncode == 0 and '"ready"' in ready.stdout
    worker_port = str(production.metrics_ports["executors"])
    assert health({"WALLETD_METRICS_PORT": worker_port}, "--role", "worker").returncode == 0


def test_health_fails_when_nothing_answers() -> None:
    down = health({"WALLETD_PORT": str(free_port())})
    assert down.returncode == 1 and down.stderr
    unset = health({}, "--role", "worker")  # no metrics port configured
    assert unset.returncode == 2 and "WALLETD_METRICS_PORT" in unset.stderr
