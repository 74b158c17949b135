"""Other activity types and a query on the production path, beside the trivial-endpoint floor.

Starts walletd over fresh state (gunicorn ``walletd ingress`` and worker processes over a
fresh PostgreSQL database and RabbitMQ vhost; ``--embedded``: ``walletd up``), then, with N
concurrent clients, pre-stamped requests of:

* ``create_wallet`` (one Ethereum account each: BIP-39 entropy, derivation, sealing, four
  rows written), on the accounts pool; ``--wallets`` of them (an organization holds at most
  100 wallets, warm-up included);
* ``whoami`` (``POST /public/v1/query/whoami``): a query, authenticated, answered by the
  ingress alone;
* the trivial Falcon endpoint under the same gunicorn settings (the floor).

The three take turns in ``--rounds`` slices so the shared machine's drifting load weighs on
all alike. Prints rate, p50/p99, each as a ratio to the floor, and CPU milliseconds per
request by process (PostgreSQL: this run's database backends only; RabbitMQ: the whole node).

    .venv/bin/python bench/activities.py [--requests 300] [--concurrency 8] [--embedded]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests

from bench.harness import Phase, TrivialServer, cpu_table, run_interleaved, run_load, summary
from tests.support import services
from tests.support.deployment import Deployment, free_port

ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}

Request = tuple[str, bytes, dict[str, str]]


def _stamped(dep: Deployment, url: str, body: dict[str, object]) -> Request:
    text = json.dumps(body)
    stamp = dep.client().stamper.stamp(text)
    return (dep.base_url + url, text.encode(),
            {stamp.stamp_header_name: stamp.stamp_header_value, "Content-Type": "application/json"})


def create_wallets(dep: Deployment, count: int, salt: str) -> list[Request]:
    base = int(time.time() * 1000)
    return [_stamped(dep, "/public/v1/submit/create_wallet", {
        "parameters": {"walletName": f"bench-{salt}-{i}", "accounts": [ETH]},
        "organizationId": dep.root.organization_id, "timestampMs": str(base + i),
        "type": "ACTIVITY_TYPE_CREATE_WALLET"}) for i in range(count)]


def whoamis(dep: Deployment, count: int) -> list[Request]:
    # A query body carries no timestamp: the same stamped body may be sent again.
    one = _stamped(dep, "/public/v1/query/whoami", {"organizationId": dep.root.organization_id})
    return [one] * count


def completed(response: requests.Response) -> bool:
    return response.status_code == 200 and \
        response.json()["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED"


def answered(response: requests.Response) -> bool:
    return response.status_code == 200 and bool(response.json().get("userId"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--wallets", type=int, default=84,
                        help="create_wallet requests (at most 90: 100 wallets per organization)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--http-workers", type=int, default=2)
    parser.add_argument("--http-threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedded", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="walletd-bench-activities-"))
    created: list[str] = []
    if args.embedded:
        dep = Deployment.embedded(work)
    else:
        created = [services.create_database(), services.create_vhost()]
        dep = Deployment.production(work, created[0], created[1], extra_env={
            "WALLETD_HTTP_WORKERS": str(args.http_workers),
            "WALLETD_HTTP_THREADS": str(args.http_threads)})
    trivial = TrivialServer(free_port(), args.http_workers, args.http_threads)
    try:
        run_load("warm-up", create_wallets(dep, 10, "warm"), args.concurrency, completed)
        run_load("warm-up", whoamis(dep, 100), args.concurrency, answered)
        run_load("warm-up", [(trivial.url, b"{}", {})] * 100, args.concurrency,
                 lambda r: r.status_code == 200)
        walletd = {("walletd up" if n == "up" else n): p.pid for n, p in dep.processes.items()}
        servers: dict[str, tuple[str, ...]] | None = {} if args.embedded else None
        database = created[0].rsplit("/", 1)[1] if created else None
        wallets = create_wallets(dep, min(args.wallets, 90), "full")
        queries = whoamis(dep, args.requests)
        phases = [
            Phase("trivial falcon endpoint", [(trivial.url, b, {}) for _, b, _ in queries],
                  lambda r: r.status_code == 200, {"trivial endpoint": trivial.proc.pid}, {}),
            Phase("create_wallet", wallets, completed, walletd, servers, database),
            Phase("whoami (query)", queries, answered, walletd, servers, database),
        ]
        (floor, floor_ms), (wallet, wallet_ms), (whoami, whoami_ms) = run_interleaved(
            phases, args.rounds, args.concurrency)
        print(("embedded default (walletd up)" if args.embedded else
               f"production path: gunicorn {args.http_workers}x{args.http_threads} gthread, "
               "PostgreSQL, RabbitMQ, worker processes")
              + f"; {args.concurrency} concurrent clients, {len(wallets)} create_wallet, "
              f"{args.requests} whoami and trivial requests")
        print(summary([floor, wallet, whoami]))
        print(f"create_wallet/trivial throughput: {wallet.rate / floor.rate:.3f}; "
              f"whoami/trivial: {whoami.rate / floor.rate:.3f}")
        for name, table in (("trivial endpoint", floor_ms), ("create_wallet", wallet_ms),
                            ("whoami", whoami_ms)):
            print(cpu_table(name, table))
            server = sum(v for k, v in table.items() if k != "load generator")
            print(f"  server CPU per request: {server:.2f} ms")
    finally:
        trivial.stop()
        dep.stop()
        if created:
            services.drop_database(created[0])
            services.delete_vhost(created[1])


if __name__ == "__main__":
    main()
