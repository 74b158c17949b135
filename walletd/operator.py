"""``walletd operator``: the seal (docs/CUSTODY.md).

    walletd operator init [--shares 5 --threshold 3] [--format json]
                                     create the sealed keyring under WALLETD_SEAL (default
                                     shamir), importing and then destroying any plaintext key
                                     files of an older deployment; prints the shares ONCE
                                     (unseal shares for shamir, recovery shares otherwise)
    walletd operator unseal [SHARE]  give one share to every running process of this host
                                     (no SHARE: typed at a prompt without echo, or one line of
                                     stdin; with an auto seal: try again now)
    walletd operator status          JSON: sealed, type, threshold, progress, version, processes
    walletd operator seal            drop the root key from every running process
    walletd operator rekey           new shares for the same root key (a quorum of the old ones
                                     on stdin, one per line, or typed at the prompt)
    walletd operator seal-migrate --to TYPE
                                     unwrap with the current seal, wrap with TYPE, one atomic
                                     replacement (authorised by a quorum of shares)
    walletd operator rotate-root     a new root key, the keyring re-encrypted under it

Shares are read from the terminal without echo (or from stdin when it is not a terminal) and
go only to the processes' memory through their admin sockets: never to a file, the database,
the broker or a log. Nothing is sent unless the socket directory is this user's (or root's)
and nobody else can write it, and every listener runs as this user or root (``SO_PEERCRED``).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any

from infra.bootstrap import bootstrap
from infra.clock import now_ms
from infra.errors import WalletError
from infra.seal import operations, sealed_file
from infra.seal.admin import call_all
from infra.seal.config import AUTO_TYPES, TYPES
from infra.seal.errors import Sealed
from infra.seal.hardening import harden_process
from infra.seal.state import SealState, resolve_type
from infra.seal.wiring import legacy_files, seal_config, seal_of
from infra.services import Services
from infra.settings import Settings


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``operator`` subcommands."""
    parser.add_argument("--data-dir")
    sub = parser.add_subparsers(dest="operator_command", required=True)
    init = sub.add_parser("init", help="create the sealed keyring and print the shares once")
    init.add_argument("--type", choices=TYPES, help="default: WALLETD_SEAL, else shamir")
    _share_options(init)
    unseal = sub.add_parser("unseal", help="give one unseal share to the running processes")
    unseal.add_argument("share", nargs="?", help="the SLIP-39 mnemonic ('-': read from stdin)")
    unseal.add_argument("--reset", action="store_true", help="forget the progress so far")
    sub.add_parser("status", help="the seal of the running processes (JSON)")
    sub.add_parser("seal", help="drop the root key from every running process")
    rekey = sub.add_parser("rekey", help="new shares, same root key (needs a quorum)")
    _share_options(rekey)
    migrate = sub.add_parser("seal-migrate", help="move the root key to another seal")
    migrate.add_argument("--to", required=True, choices=TYPES)
    _share_options(migrate)
    sub.add_parser("rotate-root", help="a new root key; the keyring re-encrypted under it")


def _share_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shares", type=int, default=5)
    parser.add_argument("--threshold", type=int, default=3)
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Dispatch ``walletd operator <command>``."""
    harden_process()  # shares and the root key pass through this process
    try:
        command = args.operator_command.replace("-", "_")
        return int(globals()[f"_{command}"](args, settings))
    except WalletError as err:
        print(err.message, file=sys.stderr)
        return 1


def read_shares(threshold: int, what: str = "share") -> list[str]:
    """``threshold`` shares from the terminal (no echo) or stdin, one per line."""
    given: list[str] = []
    interactive = sys.stdin.isatty()
    while len(given) < threshold:
        if interactive:
            line = getpass.getpass(f"{what} {len(given) + 1} of {threshold}: ")
        else:
            line = sys.stdin.readline()
            if not line:
                break
        if line.strip():
            given.append(line.strip())
    return given


def _threshold_of(current: sealed_file.SealedFile) -> int:
    if current.seal_type == "shamir":
        return int(current.seal.get("threshold", 0))
    return int((current.recovery or {}).get("threshold", 0))


def _print_outcome(outcome: operations.Outcome, fmt: str, settings: Settings) -> None:
    if fmt == "json":
        print(json.dumps({"shares": outcome.shares, "threshold": outcome.threshold,
                          "type": outcome.seal_type, "recovery": outcome.recovery}))
        return
    kind = "recovery shares" if outcome.recovery else "unseal shares"
    if outcome.shares:
        print(f"{kind} ({outcome.threshold} of {len(outcome.shares)} are needed"
              + ("; they authorise rekey and seal migration and decrypt nothing" if outcome.recovery
                 else " to unseal") + "). They are shown ONCE: give each to a different person.\n")
        for i, share in enumerate(outcome.shares, 1):
            print(f"share {i}: {share}")
        print()
    print(f"sealed keyring: {settings.effective_keyring_file} ({outcome.seal_type} seal)")


def _init(args: argparse.Namespace, settings: Settings) -> int:
    config = seal_config(settings)
    kind = args.type or resolve_type(config, None, settings.seal_default)
    if args.type and config.type and args.type != config.type:
        print(f"--type {args.type} disagrees with WALLETD_SEAL={config.type}", file=sys.stderr)
        return 2
    outcome = operations.initialise(config, kind, count=args.shares, threshold=args.threshold,
                                    legacy=legacy_files(settings), now_ms=now_ms())
    for path in outcome.imported:
        print(f"imported {path} into the sealed keyring, then overwrote and removed it",
              file=sys.stderr)
    if kind == "static":
        print("the static seal is for DEVELOPMENT ONLY (its key file sits beside the data)",
              file=sys.stderr)
    _print_outcome(outcome, args.format, settings)
    return 0


def _answers(settings: Settings, request: dict[str, Any]) -> list[dict[str, Any]]:
    return call_all(seal_config(settings).socket_dir, request)


def _summary(settings: Settings, answers: list[dict[str, Any]]) -> dict[str, Any]:
    config = seal_config(settings)
    try:
        current = sealed_file.read(config.keyring_file)
    except Sealed:
        current = None
    statuses = [a.get("status") or {} for a in answers]
    kind = current.seal_type if current else (config.type or settings.seal_default)
    summary: dict[str, Any] = {
        "sealed": not statuses or any(s.get("sealed", True) for s in statuses),
        "type": kind,
        "threshold": _threshold_of(current) if current else 0,
        "progress": max((int(s.get("progress", 0)) for s in statuses), default=0),
        "version": current.root_version if current else 0,
        "initialized": current is not None,
        "recovery_shares": bool(current and current.recovery),
        "processes": statuses,
    }
    errors = [a["error"] for a in answers if not a.get("ok")]
    if errors:
        summary["errors"] = errors
    return summary


def _status(args: argparse.Namespace, settings: Settings) -> int:
    print(json.dumps(_summary(settings, _answers(settings, {"op": "status"})), indent=2))
    return 0


def _unseal(args: argparse.Namespace, settings: Settings) -> int:
    if args.reset:
        answers = _answers(settings, {"op": "reset"})
    elif args.share is None and _recorded_type(settings) != "shamir":
        answers = _answers(settings, {"op": "unseal"})  # auto seals: try again now
    else:
        share = args.share
        if share is None or share == "-":
            shares_read = read_shares(1, "unseal share")
            share = shares_read[0] if shares_read else ""
        answers = _answers(settings, {"op": "unseal", "share": share})
    if not answers:
        print(f"no running walletd process found under {seal_config(settings).socket_dir}",
              file=sys.stderr)
        return 1
    summary = _summary(settings, answers)
    print(json.dumps(summary, indent=2))
    return 1 if summary.get("errors") else 0


def _recorded_type(settings: Settings) -> str:
    try:
        current = sealed_file.read(seal_config(settings).keyring_file)
    except Sealed:
        return ""
    return current.seal_type if current else ""


def _seal(args: argparse.Namespace, settings: Settings) -> int:
    answers = _answers(settings, {"op": "seal"})
    print(json.dumps(_summary(settings, answers), indent=2))
    return 0 if answers else 1


def _quorum(settings: Settings) -> list[str]:
    current = operations.current_file(seal_config(settings))
    if current.seal_type == "static":
        return []
    what = "unseal share" if current.seal_type == "shamir" else "recovery share"
    return read_shares(_threshold_of(current), what)


def _rekey(args: argparse.Namespace, settings: Settings) -> int:
    outcome = operations.rekey(seal_config(settings), _quorum(settings), args.shares,
                               args.threshold)
    _print_outcome(outcome, args.format, settings)
    return 0


def _seal_migrate(args: argparse.Namespace, settings: Settings) -> int:
    outcome = operations.migrate(seal_config(settings), args.to, _quorum(settings), args.shares,
                                 args.threshold)
    _print_outcome(outcome, args.format, settings)
    print(f"set WALLETD_SEAL={args.to} for every process and restart them", file=sys.stderr)
    return 0


def _rotate_root(args: argparse.Namespace, settings: Settings) -> int:
    config = seal_config(settings)
    current = operations.current_file(config)
    given = [] if current.seal_type in AUTO_TYPES else _quorum(settings)
    version = operations.rotate_root(config, given)
    print(f"root key version {version} is current")
    return 0


def unsealed(services: Services) -> SealState:
    """The CLI process's seal, unsealed (shares read for shamir).

    Raises:
        Sealed: it cannot be unsealed (the reason says why).
    """
    harden_process()
    state = seal_of(services)
    if state.sealed:
        current = sealed_file.read(state.config.keyring_file)
        if current is not None and current.seal_type == "shamir":
            given = read_shares(_threshold_of(current), "unseal share")
            root = operations.authorise(state.config, current, given)
            state.unseal_with(root, current)
    if state.sealed:
        raise Sealed(f"the service is sealed ({state.reason})")
    return state


def cli_services(settings: Settings) -> Any:
    """CLI services with the seal opened (keys and webhooks commands), in a process that
    leaves no core file and is not dumpable."""
    harden_process()
    services = bootstrap(settings, "cli")
    unsealed(services)
    return services


COMMAND = (configure, run)
