"""Shared benchmark plumbing: a closed-loop load generator and the trivial-endpoint floor."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Result:
    """Throughput and latency of one measured phase."""

    name: str
    count: int
    seconds: float
    latencies_ms: list[float]
    ok: int

    @property
    def rate(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    def pct(self, p: float) -> float:
        data = sorted(self.latencies_ms)
        if not data:
            return float("nan")
        return data[min(len(data) - 1, round(p / 100 * (len(data) - 1)))]

    def line(self) -> str:
        return (f"{self.name:<28} {self.rate:9.1f}/s  p50 {self.pct(50):7.2f} ms  "
                f"p99 {self.pct(99):7.2f} ms  ok {self.ok}/{self.count}")


def run_load(name: str, requests_: Sequence[tuple[str, bytes, dict[str, str]]], concurrency: int,
             check: Callable[[requests.Response], bool]) -> Result:
    """Send every request once from ``concurrency`` threads (closed loop, keep-alive)."""
    lock = threading.Lock()
    index = [0]
    latencies: list[float] = []
    ok = [0]

    def worker() -> None:
        session = requests.Session()
        while True:
            with lock:
                i = index[0]
                index[0] += 1
            if i >= len(requests_):
                return
            url, body, headers = requests_[i]
            start = time.perf_counter()
            response = session.post(url, data=body, headers=headers, timeout=60)
            elapsed = (time.perf_counter() - start) * 1000
            good = check(response)
            with lock:
                latencies.append(elapsed)
                ok[0] += int(good)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Result(name, len(requests_), time.perf_counter() - start, latencies, ok[0])


@dataclass
class Phase:
    """One system's requests in an interleaved run, and the processes whose CPU it counts."""

    name: str
    load: Sequence[tuple[str, bytes, dict[str, str]]]
    check: Callable[[requests.Response], bool]
    processes: dict[str, int]
    servers: dict[str, tuple[str, ...]] | None = None
    database: str | None = None


def run_interleaved(phases: Sequence[Phase], rounds: int,
                    concurrency: int) -> list[tuple[Result, dict[str, float]]]:
    """Each phase's requests in ``rounds`` slices, the phases taking turns slice by slice.

    On a shared machine the background load drifts over a run; taking turns exposes every
    phase to the same drift, so their ratios hold where back-to-back phases would not. Returns
    per phase the merged :class:`Result` and CPU milliseconds per request by process group.
    """
    merged: list[tuple[Result, dict[str, float]]] = [
        (Result(p.name, 0, 0.0, [], 0), {}) for p in phases]
    for turn in range(rounds):
        for phase, (total, cpu) in zip(phases, merged, strict=True):
            size = -(-len(phase.load) // rounds)
            part = phase.load[turn * size:(turn + 1) * size]
            if not part:
                continue
            counter = ProcessCpu(phase.processes, phase.servers, phase.database)
            result = run_load(phase.name, part, concurrency, phase.check)
            for group, ms in counter.per_item_ms(1).items():
                cpu[group] = cpu.get(group, 0.0) + ms
            total.count += result.count
            total.seconds += result.seconds
            total.latencies_ms.extend(result.latencies_ms)
            total.ok += result.ok
    return [(total, dict(sorted(((g, ms / max(total.count, 1)) for g, ms in cpu.items()),
                                key=lambda kv: -kv[1])))
            for total, cpu in merged]


class TrivialServer:
    """gunicorn serving bench/trivial_app.py with the ingress's worker settings."""

    def __init__(self, port: int, workers: int, threads: int) -> None:
        cmd = [sys.executable, "-m", "gunicorn", "bench.trivial_app:app", "-b", f"127.0.0.1:{port}",
               "-w", str(workers), "--threads", str(threads), "-k", "gthread", "--keep-alive", "5"]
        self.url = f"http://127.0.0.1:{port}/trivial"
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                requests.post(self.url, data=b"{}", timeout=1)
                return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError("trivial server did not start")

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(10)


class StackFloorServer:
    """``bench/stack_floor_app.py``: the production pipeline's shape with none of walletd's
    work (gunicorn with the ingress's settings; a dramatiq worker of ``worker_threads``),
    over its own PostgreSQL database and RabbitMQ vhost (``database_url``, ``broker_url``)."""

    def __init__(self, port: int, workers: int, threads: int, worker_threads: int,
                 database_url: str, broker_url: str) -> None:
        env = {**os.environ, "FLOOR_DATABASE_URL": database_url, "FLOOR_BROKER_URL": broker_url}
        subprocess.run([sys.executable, "-m", "bench.stack_floor_app", "schema"], cwd=ROOT,
                       env=env, check=True, timeout=60)
        self.url = f"http://127.0.0.1:{port}/floor"
        self.database = database_url.rsplit("/", 1)[1]
        self.ingress = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "bench.stack_floor_app:app", "-b",
             f"127.0.0.1:{port}", "-w", str(workers), "--threads", str(threads), "-k", "gthread",
             "--keep-alive", "5"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        self.executor = subprocess.Popen(
            [sys.executable, "-m", "bench.stack_floor_app", "worker", str(worker_threads)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.post(self.url, data=b'{"parameters": {}}', timeout=6).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("stack floor did not start")

    def stop(self) -> None:
        for proc in (self.ingress, self.executor):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(15)


def summary(results: Sequence[Result]) -> str:
    return "\n".join(r.line() for r in results)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


class ProcessCpu:
    """CPU time (user + system, from ``/proc``) per process group while a phase runs.

    Groups are the named processes with all their descendants (gunicorn's workers, the
    worker pools' children), plus the PostgreSQL server, the RabbitMQ node and this load
    generator. Divided by the activities of the phase, it says where each one's time goes,
    a figure the shared machine's noise moves far less than throughput.
    """

    SERVERS = {"postgresql": ("postgres",), "rabbitmq": ("beam.smp",)}

    def __init__(self, roots: dict[str, int],
                 servers: dict[str, tuple[str, ...]] | None = None,
                 database: str | None = None) -> None:
        """``servers`` (default :attr:`SERVERS`) names shared servers counted by command name;
        pass ``{}`` for a system that uses none (their other clients' load is not its own).
        With ``database``, PostgreSQL counts only the backends serving that database (the
        server is shared: other databases' clients, and the background writers they keep
        busy, are left out)."""
        self.roots = dict(roots)
        self.servers = self.SERVERS if servers is None else servers
        self.database = database
        self.roots["load generator"] = os.getpid()
        self.before = self._sample()

    @staticmethod
    def _processes() -> dict[int, tuple[int, str, int]]:
        """pid -> (parent pid, command name, CPU ticks)."""
        out = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            out[int(entry)] = (int(fields[1]), name, int(fields[11]) + int(fields[12]))
        return out

    def _group_of(self, pid: int, procs: dict[int, tuple[int, str, int]]) -> str | None:
        name = procs[pid][1]
        for group, names in self.servers.items():
            if name in names:
                if name == "postgres" and self.database and not self._serves(pid):
                    return None
                return group
        current, hops = pid, 0
        while current in procs and hops < 16:
            for group, root in self.roots.items():
                if current == root:
                    return group
            current, hops = procs[current][0], hops + 1
        return None

    def _serves(self, pid: int) -> bool:
        """Whether a PostgreSQL process is a backend of :attr:`database` (its process title
        reads ``postgres: <cluster>: <user> <database> <client> <state>``)."""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False
        return f" {self.database} " in title

    def _sample(self) -> dict[int, tuple[str, int]]:
        procs = self._processes()
        out = {}
        for pid, (_, _, ticks) in procs.items():
            group = self._group_of(pid, procs)
            if group is not None:
                out[pid] = (group, ticks)
        return out

    def per_item_ms(self, items: int) -> dict[str, float]:
        """CPU milliseconds per item by group since construction, largest first."""
        after = self._sample()
        tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
        totals: dict[str, float] = {}
        for pid, (group, ticks) in after.items():
            spent = ticks - self.before.get(pid, (group, 0))[1]
            totals[group] = totals.get(group, 0.0) + spent * tick_ms / max(items, 1)
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def cpu_table(title: str, per_item: dict[str, float]) -> str:
    """``per_item_ms`` as printed lines, with the total."""
    lines = [f"{title}: CPU ms per request by process"]
    lines += [f"  {group:<16} {ms:7.2f}" for group, ms in per_item.items()]
    lines.append(f"  {'total':<16} {sum(per_item.values()):7.2f}")
    return "\n".join(lines)
