"""``walletd keys``: master-key custody commands.

    walletd keys rotate            add a master-key version, make it current, rewrap every
                                   wrapped data key in the database under it
    walletd keys rewrap            rewrap data keys still under an older version (no new one)
    walletd keys status            versions in the key ring and how many rows each wraps
    walletd keys retire VERSION    stop a version from unwrapping (refused while rows use it)
    walletd keys service-rotate PURPOSE
                                   add a version of a service login key (notarizer,
                                   verification-token, encryption); it signs from now on,
                                   older versions keep verifying/decrypting
    walletd keys service-retire PURPOSE VERSION
                                   delete an older version (what it signed stops verifying)

The master keys live in the sealed keyring (docs/CUSTODY.md): this command unseals its own
copy (an auto seal by itself; shamir reads a quorum of shares from the terminal or stdin).
Running workers pick up a new version on their own (they re-read the sealed keyring when it
changes). Only this command and worker processes ever open the key ring.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from infra.audit import leaves as audit
from infra.crypto.keyring import KeyringUnavailable
from infra.errors import InvalidRequest, Unavailable
from infra.seal.state import SealState
from infra.seal.wiring import seal_of
from infra.services import Services
from infra.sessions.service_keys import PURPOSES, public_versions, retire_version
from infra.settings import Settings
from infra.wallets.custody import rewrap_all, versions_in_use
from infra.worker_services import custody_of, service_keys
from walletd.operator import cli_services


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``keys`` subcommands."""
    parser.add_argument("--data-dir")
    sub = parser.add_subparsers(dest="keys_command", required=True)
    sub.add_parser("rotate", help="add a master-key version and rewrap every data key")
    sub.add_parser("rewrap", help="rewrap data keys still wrapped by an older version")
    sub.add_parser("status", help="key ring versions and the rows each one wraps")
    retire = sub.add_parser("retire", help="retire a master-key version no row uses")
    retire.add_argument("version", type=int)
    service_rotate = sub.add_parser("service-rotate", help="add a version of a service key")
    service_rotate.add_argument("purpose", choices=PURPOSES)
    service_retire = sub.add_parser("service-retire", help="delete an older service key version")
    service_retire.add_argument("purpose", choices=PURPOSES)
    service_retire.add_argument("version", type=int)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Dispatch ``walletd keys <command>``."""
    try:
        services = cli_services(settings)
        if args.keys_command == "rotate":
            return _rotate(services)
        if args.keys_command == "rewrap":
            return _rewrap(services)
        if args.keys_command == "status":
            return _status(services)
        if args.keys_command == "service-rotate":
            return _service_rotate(services, args.purpose)
        if args.keys_command == "service-retire":
            return _service_retire(services, args.purpose, args.version)
        return _retire(services, args.version)
    except (KeyringUnavailable, InvalidRequest, Unavailable) as err:
        print(err.message, file=sys.stderr)
        return 1


def _rewrap_rows(services: Services, event: str) -> tuple[int, int]:
    custody = custody_of(services)
    with services.uow() as uow:
        changed = rewrap_all(uow.session, custody)
        audit.record_key_event(uow.session, event, {"masterKeyVersion": custody.keyring.current,
                                                    "rowsRewrapped": changed})
        uow.commit()
    return custody.keyring.current, changed


def _seal(services: Services) -> SealState:
    return seal_of(services)


def _rotate(services: Services) -> int:
    _seal(services).update(lambda c: replace(c, master=c.master.with_new_version()))
    current, changed = _rewrap_rows(services, "MASTER_KEY_ROTATED")
    print(f"master key version {current} is current; rewrapped {changed} data keys")
    return 0


def _rewrap(services: Services) -> int:
    current, changed = _rewrap_rows(services, "MASTER_KEY_REWRAPPED")
    print(f"rewrapped {changed} data keys under master key version {current}")
    return 0


def _status(services: Services) -> int:
    keyring = custody_of(services).keyring
    with services.uow() as uow:
        usage = versions_in_use(uow.session)
    for version in sorted(keyring.keys):
        key = keyring.keys[version]
        state = "current" if version == keyring.current else ("retired" if key.retired else "active")
        print(f"version {version}: {state}, wraps {usage.get(version, 0)} rows")
    with services.uow() as uow:
        for purpose in PURPOSES:
            versions = public_versions(uow.session, purpose)
            listed = ", ".join(f"v{v.version}" + (" (current)" if i == 0 else "")
                               for i, v in enumerate(versions))
            print(f"service key {purpose}: {listed or 'not created yet'}")
    return 0


def _service_rotate(services: Services, purpose: str) -> int:
    with services.uow() as uow:
        version = service_keys(services).add_version(uow.session, purpose)
    print(f"service key {purpose} version {version} is current; older versions keep verifying "
          "until retired")
    return 0


def _service_retire(services: Services, purpose: str, version: int) -> int:
    with services.uow() as uow:
        retire_version(uow.session, purpose, version)
    print(f"service key {purpose} version {version} is retired")
    return 0


def _retire(services: Services, version: int) -> int:
    with services.uow() as uow:
        used = versions_in_use(uow.session).get(version, 0)
    if used:
        print(f"version {version} still wraps {used} rows; run `walletd keys rotate` first",
              file=sys.stderr)
        return 1
    _seal(services).update(lambda c: replace(c, master=c.master.with_retired(version)))
    print(f"master key version {version} is retired")
    return 0


COMMAND = (configure, run)
