"""Activity pipeline throughput on the production path, against the trivial-endpoint floor.

Starts gunicorn (``walletd ingress``) and separate worker processes over a fresh PostgreSQL
database and RabbitMQ vhost, then N concurrent clients submit pre-stamped
``create_api_keys`` activities (one new key each). In the same run, the same number of
requests go to a trivial Falcon endpoint under the same gunicorn settings. Prints
completed activities/s, p50/p99 latency for both and their ratio.

    .venv/bin/python bench/pipeline.py [--requests 600] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import TrivialServer, run_load, summary
from tests.support import services
from tests.support.deployment import Deployment, free_port
from tests.support.keys import make_key


def stamped_create_api_keys(dep: Deployment, count: int) -> list[tuple[str, bytes, dict[str, str]]]:
    client = dep.client()
    out = []
    base = int(time.time() * 1000)
    for i in range(count):
        body = json.dumps({
            "parameters": {"apiKeys": [make_key().api_key_params(f"bench-{i}", "3600")],
                           "userId": dep.root.user_id},
            "organizationId": dep.root.organization_id,
            "timestampMs": str(base + i),
            "type": "ACTIVITY_TYPE_CREATE_API_KEYS_V2"})
        stamp = client.stamper.stamp(body)
        out.append((dep.base_url + "/public/v1/submit/create_api_keys", body.encode(),
                    {stamp.stamp_header_name: stamp.stamp_header_value,
                     "Content-Type": "application/json"}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--http-workers", type=int, default=2)
    parser.add_argument("--http-threads", type=int, default=8)
    args = parser.parse_args()

    db, vhost = services.create_database(), services.create_vhost()
    work = Path(tempfile.mkdtemp(prefix="walletd-bench-"))
    dep = Deployment.production(work, db, vhost, extra_env={
        "WALLETD_HTTP_WORKERS": str(args.http_workers),
        "WALLETD_HTTP_THREADS": str(args.http_threads)})
    trivial = TrivialServer(free_port(), args.http_workers, args.http_threads)
    try:
        warm = stamped_create_api_keys(dep, 40)
        run_load("warm-up", warm, args.concurrency, lambda r: r.status_code == 200)
        run_load("warm-up", [(trivial.url, b"{}", {})] * 200, args.concurrency,
                 lambda r: r.status_code == 200)
        load = stamped_create_api_keys(dep, args.requests)

        def completed(r):  # type: ignore[no-untyped-def]
            return r.status_code == 200 and \
                r.json()["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED"

        floor = run_load("trivial falcon endpoint", [(trivial.url, b, {}) for _, b, _ in load],
                         args.concurrency, lambda r: r.status_code == 200)
        pipeline = run_load("create_api_keys pipeline", load, args.concurrency, completed)
        print(f"production path: gunicorn {args.http_workers}x{args.http_threads} gthread, "
              f"PostgreSQL, RabbitMQ, worker processes; {args.concurrency} concurrent clients, "
              f"{args.requests} requests per phase")
        print(summary([floor, pipeline]))
        print(f"ratio pipeline/trivial throughput: {pipeline.rate / floor.rate:.3f}; "
              f"p50 latency ratio: {pipeline.pct(50) / floor.pct(50):.1f}x")
    finally:
        trivial.stop()
        dep.stop()
        services.drop_database(db)
        services.delete_vhost(vhost)


if __name__ == "__main__":
    main()
