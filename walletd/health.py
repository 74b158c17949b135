"""``walletd health``: exit 0 when a running role answers its health (or readiness) check.

    walletd health                       the ingress on WALLETD_PORT (GET /health)
    walletd health --role worker         a worker role on WALLETD_METRICS_PORT
    walletd health --ready               GET /ready instead (database and broker reachable)
    walletd health --url URL             any URL

For container health checks and probes: the image needs no curl.
"""

from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.request

from infra.settings import Settings


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``health`` options."""
    parser.add_argument("--role", choices=("ingress", "worker"), default="ingress")
    parser.add_argument("--ready", action="store_true", help="check /ready instead of /health")
    parser.add_argument("--url", help="the URL to check (overrides --role and --ready)")
    parser.add_argument("--timeout", type=float, default=5.0)


def url_for(args: argparse.Namespace, settings: Settings) -> str:
    """The URL ``walletd health`` checks."""
    if args.url:
        return str(args.url)
    port = settings.metrics_port if args.role == "worker" else settings.port
    return f"http://127.0.0.1:{port}/" + ("ready" if args.ready else "health")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Check the URL: 0 on a 2xx answer, 1 otherwise."""
    if args.role == "worker" and not args.url and not settings.metrics_port:
        print("WALLETD_METRICS_PORT is not set: a worker serves no health check", file=sys.stderr)
        return 2
    url = url_for(args, settings)
    try:
        with urllib.request.urlopen(url, timeout=args.timeout) as answer:
            print(answer.read().decode(errors="replace"))
            return 0
    except urllib.error.HTTPError as ex:
        print(f"{url}: {ex.code} {ex.read().decode(errors='replace')}", file=sys.stderr)
    except OSError as ex:
        print(f"{url}: {ex}", file=sys.stderr)
    return 1


COMMAND = (configure, run)
