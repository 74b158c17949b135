"""``/metrics`` from every role and JSON logs that follow one activity across processes.

Metrics: scraped before and after activities submitted with the official client, on the
embedded path (one process) and on the production path (gunicorn in multiprocess mode, each
worker group on its own ``WALLETD_METRICS_PORT``). Logs: ``WALLETD_LOG_FORMAT=json``; the
lines of one activity carry its id, its organization and the request id of the submit that
created it, in the ingress and in the workers.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from turnkey_sdk_types import CreateWalletBody

from tests.support.deployment import Deployment

COMPLETED = "ACTIVITY_STATUS_COMPLETED"
CREATE_WALLET = "ACTIVITY_TYPE_CREATE_WALLET"


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a metrics page: ``(name, sorted labels) -> value``."""
    answer = requests.get(url, timeout=30)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return float(samples.get((name, tuple(sorted(labels.items()))), 0.0))


def create_wallet(dep: Deployment) -> str:
    answer = dep.client().create_wallet(CreateWalletBody(walletName=f"m-{uuid.uuid4().hex[:8]}",
                                                         accounts=[]))
    assert answer.activity.status.value == COMPLETED
    return str(answer.activity.id)


def eventually(read, predicate, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    """Worker-side counts land a moment after the client's answer (after the commit)."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if predicate(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def test_embedded_metrics_count_activities_messages_and_queues(embedded: Deployment) -> None:
    url = embedded.metrics_url("up")
    before = scrape(url)
    for _ in range(2):
        create_wallet(embedded)
    after = eventually(lambda: scrape(url), lambda s: value(
        s, "walletd_activities_total", type=CREATE_WALLET, status=COMPLETED) >= value(
        before, "walletd_activities_total", type=CREATE_WALLET, status=COMPLETED) + 2)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("walletd_activities_total", type=CREATE_WALLET, status=COMPLETED) == 2
    assert moved("walletd_activities_total", type=CREATE_WALLET,
                 status="ACTIVITY_STATUS_PENDING") == 2
    assert moved("walletd_activity_settle_seconds_count", type=CREATE_WALLET, status=COMPLETED) == 2
    assert moved("walletd_messages_total", queue="accounts", actor="execute_account_activity",
                 outcome="ok") >= 2
    assert ("walletd_queue_messages", (("kind", "ready"), ("queue", "signing"))) in after
    assert ("walletd_webhook_backlog", ()) in after
    assert ("walletd_sweeper_resends_total", ()) in after


def test_production_metrics_from_ingress_and_each_worker_group(production: Deployment) -> None:
    ingress, executors, consensus = (production.metrics_url(n)
                                     for n in ("ingress", "executors", "consensus"))
    before = {url: scrape(url) for url in (ingress, executors, consensus)}
    for _ in range(3):
        create_wallet(production)
    pending = dict(type=CREATE_WALLET, status="ACTIVITY_STATUS_PENDING")
    completed = dict(type=CREATE_WALLET, status=COMPLETED)
    # The ingress (two gunicorn workers, one page) counts the submissions it created.
    after_ingress = scrape(ingress)
    assert (value(after_ingress, "walletd_activities_total", **pending)
            - value(before[ingress], "walletd_activities_total", **pending)) == 3
    # The executors count the completions and how long they took from the submission.
    target = value(before[executors], "walletd_activities_total", **completed) + 3
    after_exec = eventually(lambda: scrape(executors),
                            lambda s: value(s, "walletd_activities_total", **completed) >= target)
    assert value(after_exec, "walletd_activities_total", **completed) == target
    assert (value(after_exec, "walletd_activity_settle_seconds_count", **completed)
            - value(before[executors], "walletd_activity_settle_seconds_count", **completed)) == 3
    assert (value(after_exec, "walletd_messages_total", queue="accounts",
                  actor="execute_account_activity", outcome="ok")
            - value(before[executors], "walletd_messages_total", queue="accounts",
                    actor="execute_account_activity", outcome="ok")) >= 3
    # The consensus pool's page (its sweeper's re-sends) and queue depth read from RabbitMQ;
    # worker health on the same port.
    after_cons = scrape(consensus)
    assert ("walletd_sweeper_resends_total", ()) in after_cons
    assert ("walletd_queue_messages", (("kind", "ready"), ("queue", "consensus"))) in after_cons
    port = production.metrics_ports["executors"]
    assert requests.get(f"http://127.0.0.1:{port}/health", timeout=10).json() == {"status": "ok"}
    assert requests.get(f"http://127.0.0.1:{port}/ready", timeout=10).status_code == 200


# -- JSON logs ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def json_logged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    from tests.support import services

    db = services.create_database()
    vhost = services.create_vhost()
    dep = Deployment.production(tmp_path_factory.mktemp("json-logs"), db, vhost,
                                extra_env={"WALLETD_LOG_FORMAT": "json"})
    yield dep
    dep.stop()
    services.drop_database(db)
    services.delete_vhost(vhost)


def json_lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    lines = []
    for raw in path.read_text(errors="replace").splitlines():
        if raw.startswith("{"):
            lines.append(json.loads(raw))  # every structured line parses
    return lines


def test_json_logs_follow_one_activity_across_processes(json_logged: Deployment) -> None:
    dep = json_logged
    activity_id = create_wallet(dep)

    def mentioning() -> dict[str, list[dict]]:  # type: ignore[type-arg]
        return {name: [line for line in json_lines(dep.workdir / f"{name}.log")
                       if line.get("activity_id") == activity_id]
                for name in ("ingress", "executors")}

    seen = eventually(mentioning, lambda found: all(found.values()))
    assert all(seen.values()), {name: len(lines) for name, lines in seen.items()}
    every = [line for lines in seen.values() for line in lines]
    # One request id and one organization across processes. Every status change carries both;
    # a message the sweeper re-sent (under load) carries no request id, and one that found the
    # activity already done changed nothing, so those lines may lack them.
    changes = [line for line in every if " -> " in line["message"]]
    assert {line.get("organization_id") for line in changes} == {dep.root.organization_id}
    assert {line["organization_id"] for line in every if "organization_id" in line} == {
        dep.root.organization_id}
    request_ids = {line.get("request_id") for line in changes}
    assert len(request_ids) == 1 and None not in request_ids
    assert {line["request_id"] for line in every if "request_id" in line} == request_ids
    assert len({line["process"] for line in every}) >= 2
    assert any(line["message"].endswith("-> ACTIVITY_STATUS_PENDING") for line in seen["ingress"])
    assert any(line["message"].endswith(f"-> {COMPLETED}") for line in seen["executors"])
    for line in every:
        assert {"time", "level", "logger", "message"} <= set(line)


def test_request_id_is_answered_and_carried(json_logged: Deployment) -> None:
    """A caller's ``X-Request-Id`` comes back; one that is not a plain token is replaced."""
    request_id = f"req-{uuid.uuid4().hex}"
    answer = requests.get(json_logged.base_url + "/health", headers={"X-Request-Id": request_id},
                          timeout=10)
    assert answer.headers["X-Request-Id"] == request_id
    minted = requests.get(json_logged.base_url + "/health", headers={"X-Request-Id": "not a token"},
                          timeout=10).headers["X-Request-Id"]
    assert minted != "not a token" and len(minted) == 32
