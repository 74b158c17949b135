"""``walletd audit``: the verifiable activity log from the outside (docs/AUDIT.md).

    walletd audit verify [--database-url URL] [--state FILE] [--key VERIFIER_KEY]
        recompute the log from a database (default: WALLETD_DATABASE_URL / the data dir's)
        and check it against every activity row, every checkpoint and the checkpoint
        verified last time (kept in --state); names the first discrepancy, exit 1
    walletd audit verify --url URL --key-file root-api-key.json [--state FILE] [--key K]
        against a running deployment, as one organization: the published checkpoint, its
        consistency with the state, every activity's leaves and inclusion proofs
    walletd audit witness URL [--state FILE] [--key K] [--interval S] [--once]
        keep the deployment's latest checkpoint; refuse (exit 1 with --once, else report and
        keep watching) any that is not a consistent extension of the kept one
    walletd audit checkpoint
        append what is staged and sign a checkpoint now (reads the master key, like
        `walletd keys`)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from infra.audit.verify import Discrepancy, State, verify_database
from infra.audit.witness import Witness
from infra.settings import Settings


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``audit`` subcommands."""
    parser.add_argument("--data-dir")
    sub = parser.add_subparsers(dest="audit_command", required=True)
    verify = sub.add_parser("verify", help="recompute and check the log")
    verify.add_argument("--database-url", help="the database to verify")
    verify.add_argument("--url", help="a running deployment's base URL")
    verify.add_argument("--key-file", help="API key JSON (organizationId, apiPublicKey, "
                                           "apiPrivateKey) for --url")
    verify.add_argument("--state", default="walletd-audit-state.json",
                        help="where the last verified checkpoint is kept")
    verify.add_argument("--key", help="the log's verifier key to pin (default: pinned on first "
                                      "use)")
    witness = sub.add_parser("witness", help="watch a deployment's checkpoints")
    witness.add_argument("url")
    witness.add_argument("--state", default="walletd-witness-state.json")
    witness.add_argument("--key", help="the log's verifier key to pin")
    witness.add_argument("--interval", type=float, default=10.0)
    witness.add_argument("--once", action="store_true", help="check once and exit")
    sub.add_parser("checkpoint", help="append staged leaves and sign a checkpoint now")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Dispatch ``walletd audit <command>``."""
    if args.audit_command == "verify":
        if args.url:
            return _verify_remote(args)
        return _verify_database(args, settings)
    if args.audit_command == "witness":
        return _witness(args)
    return _checkpoint(settings)


def _verify_database(args: argparse.Namespace, settings: Settings) -> int:
    from infra.db.engine import make_engine, make_read_session_factory

    url = args.database_url or settings.effective_database_url
    engine = make_engine(url, pool_size=2, application_name="walletd-audit-verify")
    state_path = Path(args.state)
    state = State.load(state_path)
    try:
        with make_read_session_factory(engine)() as session:
            report = verify_database(session, state=state, pinned=args.key)
    except Discrepancy as found:
        print(f"DISCREPANCY: {found}", file=sys.stderr)
        for more in found.findings[1:]:
            print(f"  also: {more}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    state.save(state_path)
    size = report.checkpoint.size if report.checkpoint else 0
    print(f"ok: {report.tree_size} leaves {report.leaves_by_kind}, {report.activities} "
          f"activities, newest checkpoint of size {size} verified")
    for line in report.notes:
        print(f"note: {line}")
    return 0


def _verify_remote(args: argparse.Namespace) -> int:
    from infra.audit.remote import verify_remote

    if not args.key_file:
        print("--url needs --key-file (an API key of the organization to verify)",
              file=sys.stderr)
        return 2
    try:
        summary = verify_remote(args.url, Path(args.key_file), Path(args.state), args.key)
    except Discrepancy as found:
        print(f"DISCREPANCY: {found}", file=sys.stderr)
        for more in found.findings[1:]:
            print(f"  also: {more}", file=sys.stderr)
        return 1
    print(f"ok: {summary}")
    return 0


def _witness(args: argparse.Namespace) -> int:
    witness = Witness(args.url, Path(args.state), args.key)
    while True:
        try:
            checkpoint = witness.check()
            print(f"accepted checkpoint of size {checkpoint.size}", flush=True)
        except Discrepancy as found:
            print(f"REFUSED: {found}", file=sys.stderr, flush=True)
            if args.once:
                return 1
        except OSError as err:
            print(f"could not reach the log: {err}", file=sys.stderr, flush=True)
            if args.once:
                return 2
        if args.once:
            return 0
        time.sleep(args.interval)


def _checkpoint(settings: Settings) -> int:
    from infra.audit import checkpoints
    from infra.bootstrap import bootstrap
    from infra.worker_services import log_keys

    services = bootstrap(settings, "cli")
    stored = checkpoints.issue(services, log_keys(services))
    print(stored.note, end="")
    return 0


COMMAND = (configure, run)
