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


def summary(results: Sequence[Result]) -> str:
    return "\n".join(r.line() for r in results)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")
