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

Running workers pick up a new version on their own (an unknown version makes them re-read
the key ring file). Only this command and worker processes ever read the key ring.
"""

from __future__ import annotations

import argparse
import sys

from infra.bootstrap import bootstrap
from infra.crypto.keyring import (
    KeyringUnavailable,
    load_keyring_file,
    retire_keyring_version,
    rotate_keyring_file,
)
from infra.errors import InvalidRequest
from infra.sessions.service_keys import PURPOSES, public_versions, retire_version
from infra.settings import Settings
from infra.wallets.custody import rewrap_all, versions_in_use
from infra.worker_services import custody_of, service_keys


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
    path = settings.master_key_file
    if not path:
        print("no master key file configured (WALLETD_MASTER_KEY_FILE)", file=sys.stderr)
        return 2
    try:
        if args.keys_command == "rotate":
            return _rotate(settings, path)
        if args.keys_command == "rewrap":
            return _rewrap(settings)
        if args.keys_command == "status":
            return _status(settings, path)
        if args.keys_command == "service-rotate":
            return _service_rotate(settings, args.purpose)
        if args.keys_command == "service-retire":
            return _service_retire(settings, args.purpose, args.version)
        return _retire(settings, path, args.version)
    except (KeyringUnavailable, InvalidRequest) as err:
        print(err.message, file=sys.stderr)
        return 1


def _rewrap_rows(settings: Settings) -> tuple[int, int]:
    services = bootstrap(settings, "cli")
    custody = custody_of(services)
    with services.uow() as uow:
        changed = rewrap_all(uow.session, custody)
        uow.commit()
    return custody.keyring.current, changed


def _rotate(settings: Settings, path: str) -> int:
    rotate_keyring_file(path)
    current, changed = _rewrap_rows(settings)
    print(f"master key version {current} is current; rewrapped {changed} data keys")
    return 0


def _rewrap(settings: Settings) -> int:
    current, changed = _rewrap_rows(settings)
    print(f"rewrapped {changed} data keys under master key version {current}")
    return 0


def _status(settings: Settings, path: str) -> int:
    keyring = load_keyring_file(path)
    services = bootstrap(settings, "cli")
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


def _service_rotate(settings: Settings, purpose: str) -> int:
    services = bootstrap(settings, "cli")
    with services.uow() as uow:
        version = service_keys(services).add_version(uow.session, purpose)
    print(f"service key {purpose} version {version} is current; older versions keep verifying "
          "until retired")
    return 0


def _service_retire(settings: Settings, purpose: str, version: int) -> int:
    services = bootstrap(settings, "cli")
    with services.uow() as uow:
        retire_version(uow.session, purpose, version)
    print(f"service key {purpose} version {version} is retired")
    return 0


def _retire(settings: Settings, path: str, version: int) -> int:
    services = bootstrap(settings, "cli")
    with services.uow() as uow:
        used = versions_in_use(uow.session).get(version, 0)
    if used:
        print(f"version {version} still wraps {used} rows; run `walletd keys rotate` first",
              file=sys.stderr)
        return 1
    retire_keyring_version(path, version)
    print(f"master key version {version} is retired")
    return 0


COMMAND = (configure, run)
