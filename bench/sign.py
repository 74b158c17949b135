"""``sign_raw_payload`` throughput and latency, beside OpenBao's transit engine in the same run.

Starts walletd over fresh state: by default the production path (gunicorn ``walletd ingress``
and separate worker processes over a fresh PostgreSQL database and RabbitMQ vhost); with
``--embedded`` the embedded default (``walletd up``: SQLite and the in-process broker). Creates
a wallet with an Ethereum account, starts the peer (:mod:`bench.openbao`: a ``bao`` dev server
on loopback with a file audit device declared in its configuration and a transit ed25519
key), then in one run:

1. raw in-process signing (decode + hash + libsecp256k1 recoverable sign) for reference;
2. the trivial-endpoint floor: the same number of requests to a trivial Falcon app under the
   same gunicorn settings, N concurrent clients;
3. ``sign_raw_payload`` at full load: N concurrent clients, pre-stamped distinct payloads;
4. OpenBao ``transit/sign`` at full load: the same load generator, N concurrent clients, the
   same number of requests, distinct inputs, every one written to the audit log;
5. ``sign_raw_payload`` at half load: an open-loop schedule at half the rate phase 3 reached;
6. on the production path, the stack's floor (:mod:`bench.stack_floor_app`): the pipeline's
   shape (gunicorn + Falcon, a committed ``INSERT``, a confirmed dramatiq publish to RabbitMQ,
   a dramatiq worker claiming and settling in one transaction, the answer by ``NOTIFY``) with
   none of walletd's work, under the same settings and load: what the prescribed stack alone
   costs an activity answered inline.

Phases 2 to 4 and 6 take turns in ``--rounds`` slices (floor, walletd, OpenBao, stack floor,
floor, …), so the shared machine's drifting background load weighs on all alike and their
ratios hold.

Prints signatures/s, p50/p99 latency, the share answered ``COMPLETED`` inline (in the submit
response itself), the ratios against the floor and against OpenBao, and where the CPU went in
phases 2 to 4 (milliseconds per request by process: ingress, consensus, executors, notifier,
PostgreSQL, RabbitMQ, ``walletd up``, ``bao``, the load generator). ``--profile`` adds py-spy
stacks of every walletd process. Everything listens on 127.0.0.1 and stops at the end.

    .venv/bin/python bench/sign.py [--requests 600] [--concurrency 8] [--rounds 3] [--embedded]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests
from eth_utils import keccak

from bench.harness import (
    Phase,
    Result,
    StackFloorServer,
    TrivialServer,
    cpu_table,
    run_interleaved,
    run_load,
    summary,
)
from bench.openbao import OpenBao
from infra.crypto import signing
from infra.crypto.addresses import Curve
from tests.support import services
from tests.support.deployment import Deployment, free_port

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}

Request = tuple[str, bytes, dict[str, str]]


def create_signer(dep: Deployment) -> str:
    from turnkey_sdk_types import CreateWalletBody

    created = dep.client().create_wallet(CreateWalletBody(walletName="bench", accounts=[ETH]))
    return str(created.addresses[0])


def stamped_signs(dep: Deployment, address: str, count: int, salt: str) -> list[Request]:
    """Pre-stamped, distinct ``sign_raw_payload`` requests (no body is ever replayed)."""
    client = dep.client()
    base = int(time.time() * 1000)
    out = []
    for i in range(count):
        body = json.dumps({
            "parameters": {"signWith": address,
                           "payload": keccak(f"{salt}-{i}".encode()).hex(),
                           "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
                           "hashFunction": "HASH_FUNCTION_NO_OP"},
            "organizationId": dep.root.organization_id,
            "timestampMs": str(base + i),
            "type": "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2"})
        stamp = client.stamper.stamp(body)
        out.append((dep.base_url + "/public/v1/submit/sign_raw_payload", body.encode(),
                    {stamp.stamp_header_name: stamp.stamp_header_value,
                     "Content-Type": "application/json"}))
    return out


class InlineCounter:
    """Response check: 200 with ``COMPLETED`` in the submit answer (no polling)."""

    def __init__(self) -> None:
        self.inline = 0
        self.lock = threading.Lock()

    def __call__(self, response: requests.Response) -> bool:
        if response.status_code != 200:
            return False
        body = response.json()
        done = body["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED"
        if done and "signRawPayloadResult" in body["activity"]["result"]:
            with self.lock:
                self.inline += 1
        return bool(done)


def run_paced(name: str, reqs: list[Request], rate: float, check: InlineCounter) -> Result:
    """Open loop: request ``i`` is sent at ``t0 + i / rate`` (threads enough to keep up)."""
    lock = threading.Lock()
    index = [0]
    latencies: list[float] = []
    ok = [0]
    start = time.perf_counter() + 0.2

    def worker() -> None:
        session = requests.Session()
        while True:
            with lock:
                i = index[0]
                index[0] += 1
            if i >= len(reqs):
                return
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            url, body, headers = reqs[i]
            t = time.perf_counter()
            response = session.post(url, data=body, headers=headers, timeout=60)
            elapsed = (time.perf_counter() - t) * 1000
            good = check(response)
            with lock:
                latencies.append(elapsed)
                ok[0] += int(good)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Result(name, len(reqs), time.perf_counter() - start, latencies, ok[0])


def raw_signing(count: int) -> Result:
    """In-process: prepare (hex decode, NO_OP) + recoverable secp256k1 sign."""
    key = keccak(b"bench key")
    latencies = []
    start = time.perf_counter()
    for i in range(count):
        t = time.perf_counter()
        signing.sign_raw_payload(Curve.SECP256K1, key, keccak(str(i).encode()).hex(),
                                 "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_NO_OP")
        latencies.append((time.perf_counter() - t) * 1000)
    return Result("raw in-process signing", count, time.perf_counter() - start, latencies, count)


def _py_spy() -> str:
    """py-spy from this virtual environment (``make install-test`` puts it there), else PATH."""
    import shutil

    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else (shutil.which("py-spy") or "py-spy")


class Profiler:
    """``py-spy record`` (collapsed stacks) of every walletd process while a phase runs.

    Only samples taken while a thread holds the GIL (``--gil``): where Python spends CPU,
    not where threads wait for the database or the broker.
    """

    def __init__(self, dep: Deployment, out: Path) -> None:
        import subprocess

        self.out = out
        self.procs = []
        for name, proc in dep.processes.items():
            target = out / f"{name}.txt"
            self.procs.append((name, target, subprocess.Popen(
                [_py_spy(), "record", "--subprocesses", "--nonblocking", "--gil", "--format", "raw",
                 "--rate", "200", "-p", str(proc.pid), "-o", str(target)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
        time.sleep(1.0)

    def stop(self) -> None:
        import signal

        for _, _, proc in self.procs:
            proc.send_signal(signal.SIGINT)
        for _, _, proc in self.procs:
            proc.wait(60)

    def keep(self, directory: Path) -> None:
        """Copy the collapsed stacks to ``directory`` (for a flame graph or a closer look)."""
        import shutil

        directory.mkdir(parents=True, exist_ok=True)
        for _, target, _ in self.procs:
            if target.exists():
                shutil.copy(target, directory / target.name)

    def report(self, top: int = 12) -> str:
        lines = []
        for name, target, _ in self.procs:
            if not target.exists():
                continue
            own: dict[str, int] = {}
            incl: dict[str, int] = {}
            total = 0
            for row in target.read_text().splitlines():
                stack, _, count = row.rpartition(" ")
                n = int(count)
                total += n
                frames = stack.split(";")
                leaf = frames[-1]
                own[leaf] = own.get(leaf, 0) + n
                for frame in set(frames):
                    if any(k in frame for k in ("infra/", "ingress/", "workers/", "consensus/")):
                        incl[frame] = incl.get(frame, 0) + n
            lines.append(f"--- {name}: {total} samples; top self time")
            for frame, n in sorted(own.items(), key=lambda x: -x[1])[:top]:
                lines.append(f"  {n / total:6.1%}  {frame[:110]}")
            lines.append(f"--- {name}: top walletd frames (inclusive)")
            for frame, n in sorted(incl.items(), key=lambda x: -x[1])[:top]:
                lines.append(f"  {n / total:6.1%}  {frame[:110]}")
        return "\n".join(lines)


def start_walletd(args: argparse.Namespace, work: Path) -> tuple[Deployment, list[str]]:
    """The deployment under test and what :func:`stop_walletd` must remove after it."""
    extra = dict(item.split("=", 1) for item in args.env)
    if args.embedded:
        dep = Deployment.embedded(work, extra_env={
            "WALLETD_WORKER_THREADS": str(args.worker_threads), **extra})
        return dep, []
    db, vhost = services.create_database(), services.create_vhost()
    try:
        dep = Deployment.production(work, db, vhost, extra_env={
            "WALLETD_HTTP_WORKERS": str(args.http_workers),
            "WALLETD_HTTP_THREADS": str(args.http_threads),
            "WALLETD_WORKER_THREADS": str(args.worker_threads), **extra})
    except BaseException:
        services.drop_database(db)
        services.delete_vhost(vhost)
        raise
    return dep, [db, vhost]


def stop_walletd(dep: Deployment, created: list[str]) -> None:
    dep.stop()
    if created:
        services.drop_database(created[0])
        services.delete_vhost(created[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--http-workers", type=int, default=2)
    parser.add_argument("--http-threads", type=int, default=8)
    parser.add_argument("--worker-threads", type=int, default=8)
    parser.add_argument("--embedded", action="store_true",
                        help="measure the embedded default (walletd up) instead of production")
    parser.add_argument("--rounds", type=int, default=3,
                        help="slices per full-load phase; the floor, walletd and OpenBao take "
                             "turns slice by slice so the machine's drifting load hits all three")
    parser.add_argument("--env", action="append", default=[], metavar="WALLETD_X=VALUE",
                        help="an environment variable for every walletd process (repeatable), "
                             "e.g. to compare a setting's two values")
    parser.add_argument("--profile-out", type=Path, default=None,
                        help="with --profile: keep py-spy's collapsed stacks in this directory")
    parser.add_argument("--profile", action="store_true",
                        help="py-spy every walletd process during the full-load phases")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="walletd-bench-sign-"))
    dep, created = start_walletd(args, work)
    # The embedded default uses no shared server: other clients' PostgreSQL/RabbitMQ load
    # is not its own.
    servers: dict[str, tuple[str, ...]] | None = {} if args.embedded else None
    trivial = bao = stack = None
    floor_created: list[str] = []
    try:
        trivial = TrivialServer(free_port(), args.http_workers, args.http_threads)
        if not args.embedded:
            floor_created = [services.create_database(), services.create_vhost()]
            stack = StackFloorServer(free_port(), args.http_workers, args.http_threads,
                                     args.worker_threads, *floor_created)
            stack_body = json.dumps({"parameters": {"payload": "0x" + "ab" * 32}}).encode()
            run_load("warm-up", [(stack.url, stack_body, {})] * 200, args.concurrency,
                     lambda r: r.status_code == 200)
        bao = OpenBao(work / "openbao")
        address = create_signer(dep)
        run_load("warm-up", stamped_signs(dep, address, 60, "warm"), args.concurrency,
                 InlineCounter())
        run_load("warm-up", [(trivial.url, b"{}", {})] * 200, args.concurrency,
                 lambda r: r.status_code == 200)
        run_load("warm-up", bao.sign_requests(200, "warm"), args.concurrency, bao.signed)
        raw = raw_signing(5000)
        full_reqs = stamped_signs(dep, address, args.requests, "full")
        bao_reqs = bao.sign_requests(args.requests, "full")
        full_check = InlineCounter()
        walletd = {("walletd up" if name == "up" else name): proc.pid
                   for name, proc in dep.processes.items()}
        phases = [
            Phase("trivial falcon endpoint", [(trivial.url, b, {}) for _, b, _ in full_reqs],
                  lambda r: r.status_code == 200, {"trivial endpoint": trivial.proc.pid}, {}),
            Phase("sign_raw_payload full load", full_reqs, full_check, walletd, servers,
                  created[0].rsplit("/", 1)[1] if created else None),
            Phase("openbao transit/sign", bao_reqs, bao.signed, {"bao": bao.pid}, {}),
        ]
        if stack is not None:
            phases.append(Phase(
                "stack floor", [(stack.url, stack_body, {})] * args.requests,
                lambda r: r.status_code == 200,
                {"floor ingress": stack.ingress.pid, "floor executor": stack.executor.pid},
                None, stack.database))
        profiler = Profiler(dep, work) if args.profile else None
        audited_before = bao.audited()
        measured = run_interleaved(phases, args.rounds, args.concurrency)
        (floor, floor_ms), (full, full_ms), (peer, bao_ms) = measured[:3]
        stacked = measured[3] if stack is not None else None
        audited = bao.audited() - audited_before
        if profiler is not None:
            profiler.stop()
        half_rate = full.rate / 2
        half_reqs = stamped_signs(dep, address, max(100, args.requests // 2), "half")
        half_check = InlineCounter()
        half = run_paced(f"sign_raw_payload @{half_rate:.0f}/s", half_reqs, half_rate, half_check)

        if args.embedded:
            print(f"embedded default: walletd up (SQLite, in-process broker, "
                  f"{args.worker_threads} worker threads)", end="")
        else:
            print(f"production path: gunicorn {args.http_workers}x{args.http_threads} gthread, "
                  f"PostgreSQL, RabbitMQ, worker processes ({args.worker_threads} threads)",
                  end="")
        print(f"; {args.concurrency} concurrent clients, {args.requests} requests per phase, "
              f"full-load phases in {args.rounds} interleaved rounds")
        print("peer: OpenBao transit engine (dev server, in-memory storage), ed25519 key, "
              f"file audit device: {audited} audit entries for {peer.count} signatures")
        print(summary([raw, floor, full, peer, half, *([stacked[0]] if stacked else [])]))
        print(f"throughput sign/trivial: {full.rate / floor.rate:.3f} (target >= 0.30)")
        print(f"throughput walletd/OpenBao: {full.rate / peer.rate:.3f} (target >= 0.35)")
        print(f"p50 at full load: walletd {full.pct(50):.2f} ms, OpenBao {peer.pct(50):.2f} ms "
              f"({full.pct(50) / peer.pct(50):.1f}x)")
        print(f"p50 at half load: {half.pct(50):.2f} ms (target < 10 ms)")
        print(f"p99/p50 at full load: walletd {full.pct(99) / full.pct(50):.1f}, "
              f"OpenBao {peer.pct(99) / peer.pct(50):.1f}")
        print(f"answered COMPLETED inline: full load {full_check.inline / full.count:.1%}, "
              f"half load {half_check.inline / half.count:.1%} (target >= 99%)")
        print(cpu_table("trivial endpoint", floor_ms))
        print(cpu_table("walletd sign_raw_payload full load", full_ms))
        if not args.embedded:
            print("  (postgresql: this run's database backends only; rabbitmq: the whole node, "
                  "shared with the machine's other clients)")
        print(cpu_table("OpenBao transit/sign full load", bao_ms))
        walletd_cpu = sum(v for k, v in full_ms.items() if k != "load generator")
        bao_server_cpu = sum(v for k, v in bao_ms.items() if k != "load generator")
        print(f"server CPU per signature: walletd {walletd_cpu:.2f} ms, OpenBao "
              f"{bao_server_cpu:.2f} ms ({walletd_cpu / max(bao_server_cpu, 1e-9):.1f}x)")
        if stacked is not None:
            stack_result, stack_ms = stacked
            print(cpu_table("stack floor full load", stack_ms))
            stack_cpu = sum(v for k, v in stack_ms.items() if k != "load generator")
            print(f"stack floor: {stack_result.rate / peer.rate:.3f} of OpenBao's throughput, "
                  f"{stack_cpu:.2f} ms of server CPU a request; walletd / stack floor: "
                  f"throughput {full.rate / stack_result.rate:.3f}, server CPU "
                  f"{walletd_cpu / max(stack_cpu, 1e-9):.2f}x")
        if profiler is not None:
            print(profiler.report())
            if args.profile_out is not None:
                profiler.keep(args.profile_out)
    finally:
        if bao is not None:
            bao.stop()
        if trivial is not None:
            trivial.stop()
        if stack is not None:
            stack.stop()
        if floor_created:
            services.drop_database(floor_created[0])
            services.delete_vhost(floor_created[1])
        stop_walletd(dep, created)


if __name__ == "__main__":
    main()
