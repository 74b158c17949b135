"""Login round trips on the production path, against the trivial-endpoint floor.

Starts gunicorn (``walletd ingress``) and worker processes over a fresh PostgreSQL database
and RabbitMQ vhost, with email delivered to a real SMTP server on loopback (aiosmtpd, in this
process). Phases, each with N concurrent clients:

* the trivial Falcon endpoint under the same gunicorn settings (the floor);
* ``stamp_login``: pre-stamped logins, each with a new session key, spread over one end user
  per client, each in a sub-organization of its own as apps deploy them (the oldest expiring
  key is evicted as each user's limit fills);
* OTP round trips: ``init_otp_auth`` (submitted by the parent) → the code arrives by SMTP →
  ``otp_auth`` (credential bundle), one user per client (at most 3 live codes per contact).

    .venv/bin/python bench/logins.py [--requests 300] [--otp 60] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import Result, TrivialServer, run_load, summary
from infra.crypto import hpke
from infra.sessions.channels import PER_CONTACT
from tests.support import services
from tests.support.deployment import Deployment, free_port
from tests.support.keys import TestKey, make_key
from tests.support.mailboxes import Mailbox, code_in, start_smtp, text_part
from tests.support.raw_api import RawApi, create_sub_org, root_user_params


@dataclass
class EndUser:
    """A sub-organization with one root user holding an API key and an email address."""

    organization_id: str
    key: TestKey
    email: str


def end_users(dep: Deployment, count: int, label: str = "bench") -> list[EndUser]:
    api = RawApi(dep, dep.root, dep.root.organization_id)
    users = []
    for i in range(count):
        email = f"{label}{i}@example.com"
        key = make_key()
        sub_id, _, _ = create_sub_org(api, f"bench {i}", users=[
            root_user_params(f"bench {i}", key, userEmail=email)])
        users.append(EndUser(sub_id, key, email))
    return users


def stamped_logins(dep: Deployment, users: list[EndUser],
                   count: int) -> list[tuple[str, bytes, dict[str, str]]]:
    out = []
    base = int(time.time() * 1000)
    for i in range(count):
        user = users[i % len(users)]
        body = json.dumps({
            "parameters": {"publicKey": make_key().public_key, "expirationSeconds": "900"},
            "organizationId": user.organization_id,
            "timestampMs": str(base + i),
            "type": "ACTIVITY_TYPE_STAMP_LOGIN"}).encode()
        out.append((dep.base_url + "/public/v1/submit/stamp_login", body,
                    {"X-Stamp": user.key.stamp(body), "Content-Type": "application/json"}))
    return out


def otp_round_trips(dep: Deployment, box: Mailbox, users: list[EndUser], total: int,
                    concurrency: int) -> Result:
    """``concurrency`` clients log their own users in by email code, ``total`` round trips in
    all; each client takes its users in turn, so no contact is sent more codes than the
    per-contact limit allows (``infra.sessions.channels.PER_CONTACT``) if ``users`` suffice."""
    api = RawApi(dep, dep.root, dep.root.organization_id)
    target = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
    lock = threading.Lock()
    left = [total]
    latencies: list[float] = []
    ok = [0]

    def worker(mine: list[EndUser]) -> None:
        turn = 0
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
            user = mine[turn % len(mine)]
            turn += 1
            email = user.email
            start = time.perf_counter()
            seen = box.count_to(email)
            init = api.submit("init_otp_auth", "ACTIVITY_TYPE_INIT_OTP_AUTH_V3", {
                "otpType": "OTP_TYPE_EMAIL", "contact": email, "appName": "bench"},
                user.organization_id)
            good = init.status_code == 200
            if good:
                while box.count_to(email) == seen:
                    time.sleep(0.002)
                code = code_in(text_part(box.last_to(email)))
                otp_id = init.json()["activity"]["result"]["initOtpAuthResultV2"]["otpId"]
                auth = api.submit("otp_auth", "ACTIVITY_TYPE_OTP_AUTH", {
                    "otpId": otp_id, "otpCode": code, "targetPublicKey": target},
                    user.organization_id)
                good = auth.status_code == 200 and \
                    auth.json()["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED"
            with lock:
                latencies.append((time.perf_counter() - start) * 1000)
                ok[0] += int(good)

    threads = [threading.Thread(target=worker, args=(users[i::concurrency],))
               for i in range(concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Result("otp round trip (2 activities)", total, time.perf_counter() - start,
                  latencies, ok[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--otp", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--http-workers", type=int, default=2)
    parser.add_argument("--http-threads", type=int, default=8)
    args = parser.parse_args()

    controller, box, smtp_port = start_smtp()
    db, vhost = services.create_database(), services.create_vhost()
    work = Path(tempfile.mkdtemp(prefix="walletd-bench-logins-"))
    dep = Deployment.production(work, db, vhost, extra_env={
        "WALLETD_HTTP_WORKERS": str(args.http_workers),
        "WALLETD_HTTP_THREADS": str(args.http_threads),
        "WALLETD_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}"})
    trivial = TrivialServer(free_port(), args.http_workers, args.http_threads)
    try:
        users = end_users(dep, args.concurrency)
        # The measured round trips' users, enough that none is sent more codes than the
        # per-contact limit in the window; the warm-up's are others.
        otp_users = end_users(dep, max(args.concurrency, -(-args.otp // PER_CONTACT)), "otp")
        run_load("warm-up", stamped_logins(dep, users, 40), args.concurrency,
                 lambda r: r.status_code == 200)
        run_load("warm-up", [(trivial.url, b"{}", {})] * 200, args.concurrency,
                 lambda r: r.status_code == 200)
        otp_round_trips(dep, box, users, args.concurrency, args.concurrency)
        load = stamped_logins(dep, users, args.requests)

        def completed(r):  # type: ignore[no-untyped-def]
            return r.status_code == 200 and \
                r.json()["activity"]["status"] == "ACTIVITY_STATUS_COMPLETED"

        floor = run_load("trivial falcon endpoint", [(trivial.url, b, {}) for _, b, _ in load],
                         args.concurrency, lambda r: r.status_code == 200)
        logins = run_load("stamp_login", load, args.concurrency, completed)
        otp = otp_round_trips(dep, box, otp_users, args.otp, args.concurrency)
        print(f"production path: gunicorn {args.http_workers}x{args.http_threads} gthread, "
              f"PostgreSQL, RabbitMQ, worker processes, SMTP on loopback; "
              f"{args.concurrency} concurrent clients")
        print(summary([floor, logins, otp]))
        print(f"stamp_login/trivial throughput: {logins.rate / floor.rate:.3f}; "
              f"otp round trips/trivial: {otp.rate / floor.rate:.4f}")
    finally:
        trivial.stop()
        dep.stop()
        controller.stop()
        services.drop_database(db)
        services.delete_vhost(vhost)


if __name__ == "__main__":
    main()
