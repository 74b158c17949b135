"""Chaos: N mixed activities while processes die and the servers restart.

Starts a private PostgreSQL cluster and a private RabbitMQ node (never the machine's shared
ones: ``tests/support/private_services.py``), runs the production path on them (gunicorn
ingress + one worker process per queue group, ``tests.support.deployment``), and submits
``N`` activities from ``--concurrency`` client threads over HTTP only (stamped requests):

- ``wallet``: ``create_wallet`` with one Ethereum account (root user);
- ``key``: ``create_private_keys`` V2, one secp256k1 key (root user);
- ``signature``: ``sign_raw_payload`` V2 of a distinct 32-byte digest (root user);
- ``suborg``: ``create_sub_organization`` V7 with a fresh root user and API key;
- ``gated``: ``create_private_keys`` V2 by a non-root user, held by a policy (created at setup)
  that needs two approvals; once the activity is ``CONSENSUS_NEEDED`` a second user
  approves it (``approve_activity``).

Meanwhile one fault at a time, spread over the run: SIGKILL of a random worker group's
process (a supervisor restarts it after ``--restart-delay`` seconds, as systemd's
``Restart=always`` would), SIGKILL of a random gunicorn worker (gunicorn replaces it), and
one restart each of RabbitMQ (``rabbitmqctl stop``, then start) and PostgreSQL (``pg_ctl stop
-m immediate``: every server process quits at once, crash recovery on start). After each
fault a canary (``sign_raw_payload``) is submitted until one completes: its **recovery time**
is from the fault's start until that completion.

Clients behave as Turnkey's: a request without an answer (connection reset by a killed
gunicorn worker) or answered 5xx is sent again, byte for byte (the same stamp and fingerprint,
so the service answers with the activity it stored); 503s are retried until the request's
deadline, other 5xx at most three times.

Webhooks (``bench/chaos_webhooks.py``): the root organization has three endpoints, fast,
slow (300 ms) and flapping (every 10th answer a 503), on receivers in processes of their own;
one of the worker kills is always the notifier's. At the end every event owed to them is
counted: lost, delivered twice with no fault near, delivered twice across a fault.

When the load is done and the last fault recovered, the run waits (bounded) for every
activity to settle, then counts from the database, per submitted body:

- **lost**: the client was answered with an activity, but no activity row has that body's
  fingerprint (or the row's id differs from the answered one);
- **duplicated**: more than one activity row for a fingerprint, more than one effect for one
  activity (two wallets, keys or sub-organizations under the name the body carries), or a
  user's vote recorded twice;
- **stuck**: an activity still ``PENDING`` (or ``CONSENSUS_NEEDED`` after its second approval
  was acknowledged) once the settle time is over;
- **failed**: an activity that ended ``FAILED`` or ``REJECTED`` (none of these bodies may fail);
- **missing effect** / **orphan effect**: ``COMPLETED`` without its wallet/key/sub-organization
  (or a result id that is not the row's), or such a row without a ``COMPLETED`` activity;
- **bad result**: a completed signature that does not recover to the signing address;
- **unacknowledged**: a body that never got an answer before its deadline (not a loss: the
  client does not know it was accepted; should be 0);
- **audit log not verified**: ``walletd audit verify`` over the run's database (every leaf
  against the row it states, every checkpoint's signature and consistency) names a
  discrepancy;
- **5xx**: answers >= 500. A 503 ``UNAVAILABLE`` (code 14) from the start of the PostgreSQL
  restart until 5 s after its recovery is the documented outage answer (the client retries);
  every other 5xx, the RabbitMQ restart's included, counts as a violation.

    .venv/bin/python bench/chaos.py [--activities 10000] [--concurrency 8] [--seed 1]

Exit status 1 when any violation is counted. ``make chaos`` runs 10,000 activities; the
suite runs a short one (``tests/e2e/test_chaos.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
import requests
from eth_keys import keys as eth_keys
from eth_keys.exceptions import BadSignature
from eth_utils import keccak

from bench.chaos_webhooks import WebhookWatch
from infra.submit_body import fingerprint
from tests.support.deployment import ROOT, WALLETD, WORKER_GROUPS, Deployment, free_port
from tests.support.keys import TestKey, load_p256_key, make_key
from tests.support.private_services import PrivatePostgres, PrivateRabbit
from tests.support.raw_api import envelope, root_user_params

COMPLETED = "ACTIVITY_STATUS_COMPLETED"
CONSENSUS_NEEDED = "ACTIVITY_STATUS_CONSENSUS_NEEDED"
TERMINAL = {COMPLETED, "ACTIVITY_STATUS_FAILED", "ACTIVITY_STATUS_REJECTED"}
UNAVAILABLE = 14
ETH_ACCOUNT = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
               "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}
#: Relative frequency of each kind of activity in the mix.
MIX = {"wallet": 2, "key": 2, "signature": 4, "suborg": 1, "gated": 1}
#: A 503 this long after the PostgreSQL restart recovered still counts as its outage (each
#: process's connection pool learns of the restart on its next statement).
OUTAGE_TAIL_S = 5.0
#: Activities per tenant organization: about 60 wallets and 90 private keys each, well under
#: the per-organization limits (100 wallets, 1000 private keys).
ACTIVITIES_PER_TENANT = 300
#: The share of the activities sent before the last fault; the rest wait for it to recover.
HOLD_BACK = 0.9


@dataclass
class Config:
    """One chaos run."""

    activities: int = 300
    concurrency: int = 6
    worker_kills: int = 4
    ingress_kills: int = 2
    restart_delay_s: float = 1.0
    outage_s: float = 2.0
    request_deadline_s: float = 120.0
    recovery_timeout_s: float = 180.0
    settle_timeout_s: float = 120.0
    seed: int = 1
    workdir: Path | None = None
    activities_per_tenant: int = ACTIVITIES_PER_TENANT
    #: Webhook endpoints (fast, slow, flapping) on the root organization, counted at the end.
    webhooks: bool = True
    slow_webhook_ms: float = 300.0
    webhook_settle_timeout_s: float = 300.0


# -- what was sent and answered ----------------------------------------------------------


@dataclass
class Submission:
    """One stamped body, sent (and perhaps re-sent) until answered."""

    kind: str
    tag: str
    path: str
    body: bytes
    organization_id: str
    fingerprint: str
    signer: str = ""
    activity_id: str | None = None
    status: str | None = None


@dataclass
class Answer:
    """One HTTP exchange: ``status`` 0 when no answer came (connection reset, timeout)."""

    at: float
    path: str
    status: int
    code: int | None
    detail: str


class Client:
    """Stamped POSTs with the retry rules above; every exchange is logged in ``answers``."""

    def __init__(self, base_url: str, deadline_s: float, started: float) -> None:
        self.base_url = base_url
        self.deadline_s = deadline_s
        self.started = started
        self.answers: list[Answer] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def _log(self, path: str, status: int, code: int | None, detail: str) -> None:
        with self._lock:
            self.answers.append(Answer(time.monotonic() - self.started, path, status, code, detail))

    def post(self, path: str, body: bytes, key: TestKey) -> requests.Response | None:
        """The first non-5xx answer, or ``None`` when the deadline passed without one."""
        headers = {"Content-Type": "application/json", "X-Stamp": key.stamp(body)}
        deadline = time.monotonic() + self.deadline_s
        delay, other_5xx = 0.1, 0
        while time.monotonic() < deadline:
            try:
                response = self._session().post(self.base_url + path, data=body, headers=headers,
                                                timeout=30)
            except requests.RequestException as ex:
                self._local.session = None  # a fresh connection for the next try
                self._log(path, 0, None, type(ex).__name__)
            else:
                code = _code(response)
                self._log(path, response.status_code, code,
                          response.text[:300] if response.status_code >= 500 else "")
                if response.status_code < 500:
                    return response
                if response.status_code != 503:
                    other_5xx += 1
                    if other_5xx >= 3:
                        return None
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
        return None

    def submit(self, sub: Submission, key: TestKey) -> None:
        response = self.post(f"/public/v1/submit/{sub.path}", sub.body, key)
        if response is not None and response.status_code == 200:
            activity = response.json()["activity"]
            sub.activity_id, sub.status = activity["id"], activity["status"]
        elif response is not None:
            # A 4xx: none of these bodies may be refused. Recorded; the checks count it.
            sub.status = f"HTTP {response.status_code}: {response.text[:200]}"

    def activity(self, organization_id: str, activity_id: str, key: TestKey) -> dict[str, Any] | None:
        body = json.dumps({"organizationId": organization_id, "activityId": activity_id}).encode()
        response = self.post("/public/v1/query/get_activity", body, key)
        if response is None or response.status_code != 200:
            return None
        return response.json()["activity"]


def _code(response: requests.Response) -> int | None:
    with contextlib.suppress(ValueError, AttributeError):
        code = response.json().get("code")
        return code if isinstance(code, int) else None
    return None


# -- faults ------------------------------------------------------------------------------


@dataclass
class Fault:
    """One injected fault and how long the service took to do work again."""

    name: str
    at_fraction: float
    injected_at: float | None = None
    down_s: float | None = None
    recovered_after_s: float | None = None
    during_load: bool = False
    canary: str | None = None
    #: Wall-clock (``time.time``) start and recovery, to place webhook duplicates.
    wall_start: float | None = None
    wall_end: float | None = None


def schedule(cfg: Config, rng: random.Random) -> list[Fault]:
    """The faults of a run in a random order, spread over 5%-85% of the load."""
    kills = [f"SIGKILL worker {rng.choice(sorted(WORKER_GROUPS))}" for _ in range(cfg.worker_kills)]
    if cfg.webhooks and kills and "SIGKILL worker notifier" not in kills:
        kills[0] = "SIGKILL worker notifier"  # the webhooks' own fault, always among them
    names = (kills
             + ["SIGKILL gunicorn worker"] * cfg.ingress_kills
             + ["restart RabbitMQ", "restart PostgreSQL"])
    rng.shuffle(names)
    step = 0.8 / max(len(names), 1)
    return [Fault(name, 0.05 + i * step) for i, name in enumerate(names)]


def gunicorn_workers(master: int) -> list[int]:
    """Child process ids of the gunicorn master ``master``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == master:
            out.append(int(entry))
    return out


# -- the run -----------------------------------------------------------------------------


@dataclass
class Tenant:
    """An organization the load is spread over, and who submits in it: its root user, and
    Alice and Bob, the two users of its two-approval policy; ``address`` signs."""

    organization_id: str
    root: TestKey
    alice: TestKey
    bob: TestKey
    address: str


@dataclass
class Report:
    """What a run did and what it counted."""

    config: Config
    seconds: float
    submissions: list[Submission]
    faults: list[Fault]
    answers: list[Answer]
    counts: dict[str, int]
    problems: list[str] = field(default_factory=list)

    VIOLATIONS = ("lost", "duplicated", "stuck", "failed", "refused", "missing effect",
                  "orphan effect", "bad result", "unacknowledged", "5xx outside the DB outage",
                  "faults not recovered", "webhook lost", "webhook duplicates, no fault near",
                  "audit log not verified")

    def violations(self) -> dict[str, int]:
        return {name: self.counts[name] for name in self.VIOLATIONS if self.counts.get(name)}

    def render(self) -> str:
        kinds = Counter(s.kind for s in self.submissions)
        lines = [f"chaos: {self.config.activities} activities in {self.seconds:.1f} s, "
                 f"concurrency {self.config.concurrency}, seed {self.config.seed}",
                 "  bodies submitted: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
                 f"  faults injected: {len(self.faults)}"]
        lines.append(f"  {'fault':<34} {'at s':>7} {'load':>5} {'down s':>7} {'recovered s':>12}")
        for f in self.faults:
            lines.append(f"  {f.name:<34} {_num(f.injected_at):>7} "
                         f"{'yes' if f.during_load else 'no':>5} {_num(f.down_s):>7} "
                         f"{_num(f.recovered_after_s):>12}")
        lines.append("  counts:")
        lines += [f"    {name:<28} {value}" for name, value in self.counts.items()]
        by_kind: dict[str, list[str]] = defaultdict(list)
        for problem in self.problems:
            by_kind[problem.split(":", 1)[0]].append(problem)
        for kind, problems in by_kind.items():
            lines.append(f"  {kind}: {len(problems)} (first 10)")
            lines += [f"    {p}" for p in problems[:10]]
        return "\n".join(lines)


def _leaves(verified: str) -> int:
    """The leaf count of ``walletd audit verify``'s ``ok: N leaves ...`` line."""
    first = verified.split()[1:2]
    return int(first[0]) if first and first[0].isdigit() else 0


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


class Chaos:
    """One run over a deployment on private servers."""

    def __init__(self, cfg: Config, dep: Deployment, pg: PrivatePostgres, mq: PrivateRabbit,
                 database_url: str, log: Callable[[str], None]) -> None:
        self.cfg, self.dep, self.pg, self.mq, self.log = cfg, dep, pg, mq, log
        self.database_url = database_url
        self.rng = random.Random(cfg.seed)
        self.started = time.monotonic()
        self.client = Client(dep.base_url, cfg.request_deadline_s, self.started)
        self.submissions: list[Submission] = []
        self._lock = threading.Lock()
        self.done = 0
        self.load_over = threading.Event()
        self.faults_over = threading.Event()
        self.problems: list[str] = []
        self.tenants = self._setup()
        self.webhooks: WebhookWatch | None = None
        if cfg.webhooks:
            self.webhooks = WebhookWatch(slow_ms=cfg.slow_webhook_ms,
                                         settle_timeout_s=cfg.webhook_settle_timeout_s)
            self.webhooks.start(free_port)
            root = load_p256_key(dep.root.private_key)
            self.webhooks.register(
                lambda params: self._ok(root, "create_webhook_endpoint",
                                        "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", params),
                database_url)

    # -- setup (before any fault) ----------------------------------------------------------
    def _ok(self, key: TestKey, path: str, type_: str, params: dict[str, Any],
            organization_id: str | None = None) -> dict[str, Any]:
        """Submit a setup activity and wait for its result (it must complete)."""
        sub = self._submission("setup", "setup", path, type_, params,
                               organization_id or self.dep.root.organization_id)
        self.client.submit(sub, key)
        deadline = time.monotonic() + self.cfg.settle_timeout_s
        while sub.activity_id is not None and time.monotonic() < deadline:
            activity = self.client.activity(sub.organization_id, sub.activity_id, key)
            if activity is not None and activity["status"] in TERMINAL:
                if activity["status"] == COMPLETED:
                    (result,) = activity["result"].values()
                    return result
                break
            time.sleep(0.2)
        raise RuntimeError(f"setup {type_} did not complete: {sub.status}")

    def _setup(self) -> list[Tenant]:
        """The root organization and enough sub-organizations that no tenant reaches a
        resource limit (100 wallets, 1000 private keys per organization)."""
        root = load_p256_key(self.dep.root.private_key)
        count = max(1, -(-self.cfg.activities // self.cfg.activities_per_tenant))

        def tenant(index: int) -> Tenant:
            if index == 0:
                return self._tenant(self.dep.root.organization_id, root)
            key = make_key()
            created = self._ok(root, "create_sub_organization",
                               "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
                                   "subOrganizationName": f"chaos tenant {index}",
                                   "rootUsers": [root_user_params(f"tenant {index} root", key)],
                                   "rootQuorumThreshold": 1})
            return self._tenant(created["subOrganizationId"], key)

        with ThreadPoolExecutor(self.cfg.concurrency) as pool:
            return list(pool.map(tenant, range(count)))

    def _tenant(self, organization_id: str, root: TestKey) -> Tenant:
        alice, bob = make_key(), make_key()
        users = self._ok(root, "create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [
            {"userName": name, "apiKeys": [key.api_key_params(f"{name} key")], "authenticators": [],
             "oauthProviders": [], "userTags": []} for name, key in (("alice", alice), ("bob", bob))]},
            organization_id)
        approvers = ", ".join(f"'{u}'" for u in users["userIds"])
        self._ok(root, "create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
            "policyName": "chaos: new keys need two approvals", "effect": "EFFECT_ALLOW", "notes": "",
            "condition": "activity.type == 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2'",
            "consensus": f"approvers.filter(u, u.id in [{approvers}]).count() >= 2"},
            organization_id)
        wallet = self._ok(root, "create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                          {"walletName": "chaos signer", "accounts": [ETH_ACCOUNT]}, organization_id)
        return Tenant(organization_id, root, alice, bob, wallet["addresses"][0])

    def _submission(self, kind: str, tag: str, path: str, type_: str, params: dict[str, Any],
                    organization_id: str, signer: str = "") -> Submission:
        body = envelope(type_, organization_id, params)
        sub = Submission(kind, tag, path, body, organization_id, fingerprint(body), signer)
        with self._lock:
            self.submissions.append(sub)
        return sub

    # -- the load --------------------------------------------------------------------------
    def _job(self, index: int, kind: str) -> None:
        a = self.tenants[index % len(self.tenants)]
        org = a.organization_id
        tag = f"chaos-{kind}-{index}"
        if kind == "wallet":
            sub = self._submission(kind, tag, "create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                                   {"walletName": tag, "accounts": [ETH_ACCOUNT]}, org)
            self.client.submit(sub, a.root)
        elif kind in ("key", "gated"):
            sub = self._submission(kind, tag, "create_private_keys",
                                   "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", {"privateKeys": [
                                       {"privateKeyName": tag, "curve": "CURVE_SECP256K1",
                                        "addressFormats": ["ADDRESS_FORMAT_ETHEREUM"],
                                        "privateKeyTags": []}]}, org)
            self.client.submit(sub, a.root if kind == "key" else a.alice)
            if kind == "gated":
                self._approve(a, sub)
        elif kind == "signature":
            self._sign(a, kind, tag)
        elif kind == "suborg":
            # Sub-organizations cannot have their own: always in the root organization.
            top = self.tenants[0]
            sub = self._submission(kind, tag, "create_sub_organization",
                                   "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
                                       "subOrganizationName": tag,
                                       "rootUsers": [root_user_params(f"{tag} root")],
                                       "rootQuorumThreshold": 1}, top.organization_id)
            self.client.submit(sub, top.root)
        else:
            raise ValueError(kind)

    def _sign(self, tenant: Tenant, kind: str, tag: str) -> Submission:
        sub = self._submission(kind, tag, "sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            "signWith": tenant.address, "payload": keccak(tag.encode()).hex(),
            "encoding": "PAYLOAD_ENCODING_HEXADECIMAL", "hashFunction": "HASH_FUNCTION_NO_OP"},
            tenant.organization_id, signer=tenant.address)
        self.client.submit(sub, tenant.root)
        return sub

    def _approve(self, tenant: Tenant, gated: Submission) -> None:
        """Wait until ``gated`` awaits consensus, then Bob approves it."""
        if gated.activity_id is None:
            return
        deadline = time.monotonic() + self.cfg.settle_timeout_s
        status = gated.status
        while status != CONSENSUS_NEEDED and time.monotonic() < deadline:
            if status in TERMINAL:
                return  # the checks report it (it should never run without Bob)
            time.sleep(0.25)
            seen = self.client.activity(gated.organization_id, gated.activity_id, tenant.alice)
            status = seen["status"] if seen else status
        if status != CONSENSUS_NEEDED:
            return  # stuck before consensus: counted by the checks
        approval = self._submission("approval", gated.tag, "approve_activity",
                                    "ACTIVITY_TYPE_APPROVE_ACTIVITY",
                                    {"fingerprint": gated.fingerprint}, gated.organization_id)
        self.client.submit(approval, tenant.bob)

    def _load(self, jobs: list[str]) -> None:
        position = iter(range(len(jobs)))
        lock = threading.Lock()

        def worker() -> None:
            while True:
                with lock:
                    index = next(position, None)
                if index is None:
                    return
                if index >= HOLD_BACK * len(jobs):
                    # The last jobs wait for the last fault: every fault hits a running load.
                    self.faults_over.wait(self.cfg.recovery_timeout_s * 20)
                self._job(index, jobs[index])
                with self._lock:
                    self.done += 1
                    if self.done % max(len(jobs) // 10, 1) == 0:
                        self.log(f"{self.done}/{len(jobs)} activities answered after "
                                 f"{time.monotonic() - self.started:.0f} s")

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(self.cfg.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.load_over.set()

    # -- faults ----------------------------------------------------------------------------
    def _inject(self, fault: Fault) -> None:
        t0 = time.monotonic()
        fault.wall_start = time.time()
        fault.injected_at = t0 - self.started
        fault.during_load = not self.load_over.is_set()
        if fault.name.startswith("SIGKILL worker "):
            group = fault.name.rsplit(" ", 1)[1]
            self.dep.kill(group)
            time.sleep(self.cfg.restart_delay_s)
            self.dep.start_worker(group)
            fault.down_s = time.monotonic() - t0
        elif fault.name == "SIGKILL gunicorn worker":
            children = gunicorn_workers(self.dep.processes["ingress"].pid)
            if not children:
                raise RuntimeError("gunicorn has no workers to kill")
            victim = self.rng.choice(children)
            fault.name += f" {victim}"
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        elif fault.name == "restart RabbitMQ":
            self.mq.stop()
            time.sleep(self.cfg.outage_s)
            self.mq.start()
            fault.down_s = time.monotonic() - t0
        elif fault.name == "restart PostgreSQL":
            self.pg.stop("immediate")
            time.sleep(self.cfg.outage_s)
            self.pg.start()
            fault.down_s = time.monotonic() - t0
        else:
            raise ValueError(fault.name)
        self._recover(fault, t0)

    def _recover(self, fault: Fault, t0: float) -> None:
        """Canaries until one completes; the fault's recovery time is until that moment."""
        deadline = t0 + self.cfg.recovery_timeout_s
        attempt = 0
        while time.monotonic() < deadline:
            attempt += 1
            canary = self._sign(self.tenants[0], "canary",
                                f"chaos-canary-{fault.at_fraction:.3f}-{attempt}")
            fault.canary = canary.activity_id
            status, until = canary.status, time.monotonic() + 15
            while (canary.activity_id and status not in TERMINAL
                   and time.monotonic() < min(until, deadline)):
                time.sleep(0.1)
                seen = self.client.activity(canary.organization_id, canary.activity_id,
                                            self.tenants[0].root)
                status = seen["status"] if seen else status
            if status == COMPLETED:
                fault.recovered_after_s = time.monotonic() - t0
                return

    def _faults(self, faults: list[Fault], total: int) -> None:
        try:
            for fault in faults:
                while self.done < fault.at_fraction * total and not self.load_over.is_set():
                    time.sleep(0.05)
                self._inject(fault)
                fault.wall_end = time.time()
                self.log(f"{fault.name} at {_num(fault.injected_at)} s: recovered after "
                         f"{_num(fault.recovered_after_s)} s")
        finally:
            self.faults_over.set()

    # -- settling and counting ---------------------------------------------------------------
    def _settle(self) -> None:
        """Wait (bounded) until no activity of the run is left in flight."""
        deadline = time.monotonic() + self.cfg.settle_timeout_s
        while time.monotonic() < deadline:
            with psycopg.connect(self.database_url, autocommit=True) as conn:
                rows = conn.execute("SELECT a.status, (SELECT count(*) FROM votes v "
                                    "WHERE v.activity_id = a.id) FROM activities a "
                                    "WHERE a.status NOT IN (%s, %s, %s)", tuple(TERMINAL)).fetchall()
            # A gated activity with one vote waits for an approval that was never sent.
            if all(status == CONSENSUS_NEEDED and votes < 2 for status, votes in rows):
                return
            time.sleep(0.5)

    def _verify_audit_log(self, counts: Counter[str]) -> None:
        """``walletd audit verify`` on the run's database, as an operator runs it."""
        done = subprocess.run([*WALLETD, "audit", "verify", "--state",
                               str(self.dep.workdir / "audit-verify.json")],
                              env=self.dep.env, cwd=ROOT, text=True, capture_output=True,
                              timeout=600)
        if done.returncode != 0:
            counts["audit log not verified"] += 1
            self.problems.append("audit log not verified: "
                                 + (done.stderr or done.stdout).strip()[-2000:])
        else:
            counts["audit log verified (leaves)"] = _leaves(done.stdout)

    def run(self) -> Report:
        jobs = self.rng.choices(list(MIX), list(MIX.values()), k=self.cfg.activities)
        faults = schedule(self.cfg, self.rng)
        injector = threading.Thread(target=self._faults, args=(faults, len(jobs)), daemon=True)
        injector.start()
        self._load(jobs)
        injector.join(self.cfg.recovery_timeout_s * (len(faults) + 1) + 60)
        self._settle()
        counts = Counter[str]()
        Checks(self, counts).all()
        for fault in faults:
            if fault.recovered_after_s is None:
                counts["faults not recovered"] += 1
                self.problems.append(f"faults not recovered: {fault.name}: no canary completed in "
                                     f"{self.cfg.recovery_timeout_s:.0f} s")
        count_answers(self.client.answers, faults, counts, self.problems)
        if self.webhooks is not None:
            counts["webhook deliveries pending at the end"] = self.webhooks.settle(self.database_url)
            windows = [(f.name, f.wall_start, f.wall_end or time.time()) for f in faults
                       if f.wall_start is not None]
            self.webhooks.count(self.database_url, windows, counts, self.problems)
        self._verify_audit_log(counts)
        return Report(self.cfg, time.monotonic() - self.started, self.submissions, faults,
                      self.client.answers, dict(counts), self.problems)


# -- the checks --------------------------------------------------------------------------


class Census:
    """What the database holds after the run, indexed the way the checks look it up."""

    def __init__(self, database_url: str) -> None:
        with psycopg.connect(database_url, autocommit=True) as conn:
            activities = conn.execute("SELECT id, organization_id, fingerprint, status, result, "
                                      "failure FROM activities").fetchall()
            wallets = conn.execute("SELECT w.id, w.name, (SELECT count(*) FROM wallet_accounts a "
                                   "WHERE a.wallet_id = w.id) FROM wallets w").fetchall()
            keys = conn.execute("SELECT id, name FROM private_keys").fetchall()
            orgs = conn.execute("SELECT id, name FROM organizations").fetchall()
            votes = conn.execute("SELECT activity_id, user_id, count(*) FROM votes "
                                 "GROUP BY activity_id, user_id").fetchall()
        #: (organization, fingerprint) -> rows (id, organization, fingerprint, status, result, failure)
        self.by_fingerprint: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for row in activities:
            self.by_fingerprint[(row[1], row[2])].append(row)
        #: effect kind -> name -> row ids
        self.named: dict[str, dict[str, list[str]]] = {
            "wallet": defaultdict(list), "key": defaultdict(list), "suborg": defaultdict(list)}
        self.accounts: dict[str, int] = {}
        for wallet_id, name, accounts in wallets:
            self.named["wallet"][name].append(wallet_id)
            self.accounts[wallet_id] = accounts
        for key_id, name in keys:
            self.named["key"][name].append(key_id)
        for org_id, name in orgs:
            self.named["suborg"][name].append(org_id)
        #: activity -> user -> votes recorded
        self.votes: dict[str, dict[str, int]] = defaultdict(dict)
        for activity_id, user_id, n in votes:
            self.votes[activity_id][user_id] = n


#: The effect rows each kind of body creates, by name.
EFFECT_OF = {"wallet": "wallet", "key": "key", "gated": "key", "suborg": "suborg"}


class Checks:
    """Counts, per submitted body, what the database says became of it."""

    def __init__(self, run: Chaos, counts: Counter[str]) -> None:
        self.run, self.counts = run, counts
        self.census = Census(run.database_url)
        self.gated = {s.tag: s for s in run.submissions if s.kind == "gated"}
        self.approved = {s.tag for s in run.submissions if s.kind == "approval" and s.activity_id}

    def problem(self, name: str, sub: Submission, what: str) -> None:
        self.counts[name] += 1
        self.run.problems.append(f"{name}: {sub.kind} {sub.tag} activity {sub.activity_id}: {what}")

    def all(self) -> None:
        for name in ("lost", "duplicated", "stuck", "failed", "refused", "missing effect",
                     "orphan effect", "bad result", "unacknowledged"):
            self.counts[name] = 0
        for sub in self.run.submissions:
            if sub.tag != "setup":
                self.counts[f"bodies: {sub.kind}"] += 1
                self.body(sub)
        self.unclaimed_effects()

    def body(self, sub: Submission) -> None:
        found = self.census.by_fingerprint.get((sub.organization_id, sub.fingerprint), [])
        if len(found) > 1:
            self.problem("duplicated", sub, f"{len(found)} activities with fingerprint "
                                            f"{sub.fingerprint}")
        if sub.activity_id is None:
            if sub.status is not None:
                self.problem("refused", sub, sub.status)
            else:
                self.problem("unacknowledged", sub, f"stored: {bool(found)}")
            return
        # An approval settled within the request's wait answers with the activity it
        # approved; one still in flight answers with itself.
        answers = {r[0] for r in found[:1]}
        if sub.kind == "approval" and found:
            answers.add(self.gated[sub.tag].activity_id or "")
        if sub.activity_id not in answers:
            self.problem("lost", sub, f"answered with {sub.activity_id}, database has "
                                      f"{[r[0] for r in found]}")
            return
        _, _, _, status, result, failure = found[0]
        self.counts[f"status: {status}"] += 1
        awaiting_bob = sub.kind == "gated" and sub.tag not in self.approved
        if status not in TERMINAL and not (status == CONSENSUS_NEEDED and awaiting_bob):
            self.problem("stuck", sub, f"still {status}")
        if status in TERMINAL - {COMPLETED}:
            self.problem("failed", sub, f"{status}: {failure}")
        body: dict[str, Any] = next(iter((result or {}).values()), {})
        if sub.kind in EFFECT_OF:
            self.effect(sub, status, body)
        if sub.kind == "gated" and status == COMPLETED:
            voters = self.census.votes.get(sub.activity_id, {})
            if len(voters) != 2 or any(n != 1 for n in voters.values()):
                name = "duplicated" if any(n > 1 for n in voters.values()) else "missing effect"
                self.problem(name, sub, f"votes by user {voters}")
        if (sub.kind in ("signature", "canary") and status == COMPLETED
                and not _signed_by(sub, body)):
            self.problem("bad result", sub, f"signature {body} does not recover to {sub.signer}")

    def effect(self, sub: Submission, status: str, body: dict[str, Any]) -> None:
        """Exactly one row named after the body when COMPLETED, none otherwise."""
        kind = EFFECT_OF[sub.kind]
        ids = self.census.named[kind].get(sub.tag, [])
        if len(ids) > 1:
            self.problem("duplicated", sub, f"{len(ids)} {kind} rows named {sub.tag}: {ids}")
        if status != COMPLETED:
            if ids:
                self.problem("orphan effect", sub, f"{status} but rows {ids}")
            return
        wanted = _result_id(sub.kind, body)
        if wanted not in ids:
            self.problem("missing effect", sub, f"result {wanted}, rows {ids}")
        elif kind == "wallet" and self.census.accounts[wanted] != 1:
            self.problem("missing effect", sub, f"wallet {wanted} has "
                                                f"{self.census.accounts[wanted]} accounts, wanted 1")

    def unclaimed_effects(self) -> None:
        """Rows named like a body of this run that no answered body accounts for: a body
        refused with a 4xx, or never sent. (A body that got no answer at all is counted as
        unacknowledged; its effect may well exist.)"""
        accounted = {s.tag for s in self.run.submissions
                     if s.activity_id is not None or s.status is None}
        for kind, by_name in self.census.named.items():
            for name, ids in by_name.items():
                if name.startswith("chaos-") and name not in accounted:
                    self.counts["orphan effect"] += 1
                    self.run.problems.append(f"orphan effect: {kind} {ids} named {name} "
                                             f"without an answered activity")


def _result_id(kind: str, body: dict[str, Any]) -> str | None:
    if kind == "wallet":
        return body.get("walletId")
    if kind == "suborg":
        return body.get("subOrganizationId")
    keys = body.get("privateKeys") or [{}]
    return keys[0].get("privateKeyId")


def _signed_by(sub: Submission, body: dict[str, Any]) -> bool:
    """The signature in ``body`` recovers to the address ``sub`` asked to sign with."""
    try:
        digest = bytes.fromhex(json.loads(sub.body)["parameters"]["payload"].removeprefix("0x"))
        v = int(body["v"], 16)
        signature = eth_keys.Signature(vrs=(v % 27 if v >= 27 else v, int(body["r"], 16),
                                            int(body["s"], 16)))
        recovered = signature.recover_public_key_from_msg_hash(digest).to_checksum_address()
    except (KeyError, ValueError, TypeError, BadSignature):
        return False
    return bool(recovered.lower() == sub.signer.lower())


def count_answers(answers: list[Answer], faults: list[Fault], counts: Counter[str],
                  problems: list[str]) -> None:
    """Answers by class; 5xx inside/outside the PostgreSQL outage."""
    outages = [(f.injected_at, f.injected_at + (f.recovered_after_s or 1e9) + OUTAGE_TAIL_S)
               for f in faults if f.name == "restart PostgreSQL" and f.injected_at is not None]
    counts["requests"] = len(answers)
    counts["no answer (retried)"] = sum(1 for a in answers if a.status == 0)
    counts["5xx in the DB outage"] = 0
    counts["5xx outside the DB outage"] = 0
    for a in answers:
        if a.status < 500:
            continue
        in_outage = (a.status == 503 and a.code == UNAVAILABLE
                     and any(start <= a.at <= end for start, end in outages))
        if in_outage:
            counts["5xx in the DB outage"] += 1
        else:
            counts["5xx outside the DB outage"] += 1
            near = [f.name for f in faults if f.injected_at is not None
                    and f.injected_at <= a.at <= f.injected_at + (f.recovered_after_s or 0) + 5]
            problems.append(f"5xx: {a.status} on {a.path} at {a.at:.2f} s "
                            f"(during: {', '.join(near) or 'no fault'}): {a.detail[:160]}")


# -- running it --------------------------------------------------------------------------


def run_chaos(cfg: Config, log: Callable[[str], None] = functools.partial(print, flush=True)) -> Report:
    """Start private servers and the production path on them, run, clean up (always)."""
    workdir = cfg.workdir or Path(tempfile.mkdtemp(prefix="walletd-chaos-"))
    dep: Deployment | None = None
    try:
        with PrivatePostgres() as pg, PrivateRabbit() as mq:
            with psycopg.connect(pg.url, autocommit=True) as conn:
                conn.execute("CREATE DATABASE walletd")
            database_url = pg.url.rsplit("/", 1)[0] + "/walletd"
            log(f"private PostgreSQL on {pg.port}, RabbitMQ node {mq.node} on {mq.port}; "
                f"logs in {workdir}")
            hooks = {"WALLETD_WEBHOOK_ALLOW": "127.0.0.1",
                     "WALLETD_WORKER_THREADS_NOTIFICATIONS": "8"} if cfg.webhooks else {}
            dep = Deployment.production(workdir, database_url, mq.url, extra_env=hooks)
            chaos: Chaos | None = None
            try:
                chaos = Chaos(cfg, dep, pg, mq, database_url, log)
                return chaos.run()
            finally:
                if chaos is not None and chaos.webhooks is not None:
                    chaos.webhooks.stop()
                dep.stop()
    finally:
        if cfg.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--activities", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--worker-kills", type=int,
                        help="worker processes to SIGKILL (default: one per 500 activities, >= 4)")
    parser.add_argument("--ingress-kills", type=int,
                        help="gunicorn workers to SIGKILL (default: one per 1000 activities, >= 2)")
    parser.add_argument("--restart-delay", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-tenant", type=int, default=ACTIVITIES_PER_TENANT,
                        help="activities per tenant organization (the load is spread over "
                             "sub-organizations so that none reaches a resource limit)")
    parser.add_argument("--keep", type=Path, help="keep the deployment's logs in this directory")
    parser.add_argument("--no-webhooks", action="store_true", help="no webhook endpoints")
    parser.add_argument("--slow-webhook-ms", type=float, default=300.0,
                        help="the slow endpoint's answer time")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    cfg = Config(activities=args.activities, concurrency=args.concurrency,
                 worker_kills=args.worker_kills or max(4, args.activities // 500),
                 ingress_kills=args.ingress_kills or max(2, args.activities // 1000),
                 restart_delay_s=args.restart_delay, seed=args.seed, workdir=args.keep,
                 activities_per_tenant=args.per_tenant, webhooks=not args.no_webhooks,
                 slow_webhook_ms=args.slow_webhook_ms)
    # SIGTERM (``timeout``, Ctrl-C's cousin) unwinds too: the private servers are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    report = run_chaos(cfg)
    print(report.render())
    bad = report.violations()
    print("violations: " + (", ".join(f"{k} {v}" for k, v in bad.items()) if bad else "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
