"""A webhook receiver for benchmarks and the chaos run, in a process of its own.

``python bench/webhook_receiver.py --port P``: HTTP/1.1 with keep-alive on 127.0.0.1. Every
POST is answered after ``delay_ms`` with ``status`` (both changed at run time by
``GET /control?status=503&delay_ms=2``; ``flap=N`` answers 503 to every N-th request, after
the first N-1 answers 200). ``GET /stats`` returns what it saw: requests, answers by status,
per ``X-Turnkey-Event-Id`` how many times it was answered 200 and when (``time.time()``),
and the most requests it was ever answering at once. ``GET /reset`` forgets it all.
"""

from __future__ import annotations

import argparse
import http.server
import json
import threading
import time
from collections import Counter, defaultdict
from typing import Any
from urllib.parse import parse_qs, urlsplit


class State:
    """What the receiver does and saw."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.status = 200
        self.delay_s = 0.0
        self.flap = 0
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.requests = 0
            self.by_status: Counter[int] = Counter()
            self.accepted: dict[str, list[float]] = defaultdict(list)
            self.in_flight = 0
            self.max_in_flight = 0
            self.first_at: float | None = None
            self.last_at: float | None = None

    def begin(self) -> int:
        with self.lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            status = self.status
            if self.flap and self.requests % self.flap == 0:
                status = 503
            return status

    def end(self, event_id: str | None, status: int) -> None:
        at = time.time()
        with self.lock:
            self.in_flight -= 1
            self.by_status[status] += 1
            if 200 <= status < 300 and event_id:
                self.accepted[event_id].append(at)
                self.first_at = at if self.first_at is None else self.first_at
                self.last_at = at

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"requests": self.requests, "by_status": dict(self.by_status),
                    "accepted": dict(self.accepted), "max_in_flight": self.max_in_flight,
                    "first_at": self.first_at, "last_at": self.last_at}


STATE = State()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: Headers and body go out in two writes: without this, Nagle's algorithm holds the body
    #: until the client's delayed ACK (40 ms) on a kept-alive connection.
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        status = STATE.begin()
        try:
            if STATE.delay_s:
                time.sleep(STATE.delay_s)
        finally:
            STATE.end(self.headers.get("X-Turnkey-Event-Id"), status)
        self._answer(status, b"ok")

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/control":
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            with STATE.lock:
                STATE.status = int(query.get("status", STATE.status))
                STATE.delay_s = float(query.get("delay_ms", STATE.delay_s * 1000)) / 1000
                STATE.flap = int(query.get("flap", STATE.flap))
            self._answer(200, b"{}")
        elif url.path == "/stats":
            self._answer(200, json.dumps(STATE.stats()).encode())
        elif url.path == "/reset":
            STATE.reset()
            self._answer(200, b"{}")
        else:
            self._answer(404, b"{}")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    STATE.status, STATE.delay_s = args.status, args.delay_ms / 1000
    Server(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
