"""What ``walletd operator`` does to the sealed keyring: init (and the upgrade from the
plaintext key files), rekey, seal migration, root-key rotation.

Each writes the file once, atomically, under the writers' lock, and verifies what it wrote
(re-read, unwrap with the new seal, decrypt, compare) before anything is destroyed.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from infra.crypto import hpke
from infra.crypto.keyring import MasterKeyring, load_keyring_file
from infra.seal import sealed_file, shares
from infra.seal.config import AUTO_TYPES, SealConfig
from infra.seal.errors import BadShare, Sealed, SealMismatch
from infra.seal.sealed_file import Contents, SealedFile
from infra.seal.seals import Seal, ShamirSeal, auto_seal
from infra.seal.state import file_lock
from infra.webhooks.signing import (
    WebhookKeyRing,
    WebhookSigningKey,
    keyring_from_json,
    keyring_to_json,
    load_keyring,
)

log = logging.getLogger("walletd.seal")


@dataclass(frozen=True)
class LegacyFiles:
    """The plaintext key files of deployments from before the seal."""

    master: str = ""
    webhooks: str = ""
    auth_proxy: str = ""

    def present(self) -> list[str]:
        return [p for p in (self.master, self.webhooks, self.auth_proxy) if p and Path(p).exists()]


@dataclass
class Outcome:
    """What an operation hands back to the operator (printed once, never stored)."""

    shares: list[str] = field(default_factory=list)
    threshold: int = 0
    recovery: bool = False
    imported: list[str] = field(default_factory=list)
    seal_type: str = ""


def fresh_contents(now_ms: int) -> Contents:
    """A new deployment's keys: master version 1, one webhook key, the auth proxy key."""
    private = hpke.generate_private_key()
    ring = WebhookKeyRing((WebhookSigningKey.generate(activates_at_ms=now_ms),))
    return Contents(master=MasterKeyring.generate(), webhooks=keyring_to_json(ring),
                    auth_proxy={"privateKey": hpke.private_key_to_bytes(private).hex(),
                                "publicKey": hpke.uncompressed(private.public_key()).hex()})


def legacy_contents(legacy: LegacyFiles, now_ms: int) -> tuple[Contents, list[str]]:
    """The keys of the plaintext files (fresh ones for any file that is absent)."""
    fresh = fresh_contents(now_ms)
    found: list[str] = []
    master, webhooks, proxy = fresh.master, fresh.webhooks, fresh.auth_proxy
    if legacy.master and Path(legacy.master).exists():
        master = load_keyring_file(legacy.master)
        found.append(legacy.master)
    if legacy.webhooks and Path(legacy.webhooks).exists():
        webhooks = keyring_to_json(load_keyring(legacy.webhooks))
        found.append(legacy.webhooks)
    if legacy.auth_proxy and Path(legacy.auth_proxy).exists():
        doc = json.loads(Path(legacy.auth_proxy).read_text())
        proxy = {"privateKey": str(doc["privateKey"]), "publicKey": str(doc["publicKey"])}
        found.append(legacy.auth_proxy)
    return Contents(master=master, webhooks=webhooks, auth_proxy=proxy), found


def shred(path: str) -> None:
    """Overwrite a plaintext key file with random bytes, sync, and remove it."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open(p, "r+b") as fh:
            for _ in range(2):
                fh.seek(0)
                fh.write(os.urandom(max(size, 1)))
                fh.flush()
                os.fsync(fh.fileno())
        p.unlink()
    except FileNotFoundError:
        return


def _public(contents: Contents) -> dict[str, str]:
    return {"auth_proxy_public_key": contents.auth_proxy.get("publicKey", "")}


def _new_wrapper(config: SealConfig, kind: str, count: int, threshold: int
                 ) -> tuple[Seal, list[str], dict[str, Any] | None]:
    """The seal to wrap with, and the shares to hand out (unseal or recovery)."""
    secret = shares.new_secret()
    handed = shares.split(secret, count, threshold)
    if kind == "shamir":
        return ShamirSeal(secret, count, threshold), handed, None
    recovery = {"shares": count, "threshold": threshold,
                "verifier": shares.recovery_verifier(secret)}
    return auto_seal(kind, config), handed, recovery


def _verify(config: SealConfig, written: SealedFile, seal: Seal, root: bytes,
            contents: Contents) -> None:
    """Re-read the file and open it with ``seal``: the same keys must come back."""
    again = sealed_file.read(config.keyring_file)
    if again is None or again.keyring != written.keyring:
        raise Sealed("the sealed keyring was not written as expected")
    if seal.unwrap(again.wrapped_root, again.deployment) != root:
        raise Sealed("the written root key does not unwrap to the root key")
    if again.open(root).to_bytes() != contents.to_bytes():
        raise Sealed("the written keyring does not decrypt to the keyring")


def initialise(config: SealConfig, kind: str, *, count: int = 5, threshold: int = 3,
               legacy: LegacyFiles | None = None, now_ms: int = 0,
               quiet: bool = False) -> Outcome:
    """Create the sealed keyring; import (then shred) plaintext key files if there are any.

    Raises:
        SealMismatch: already initialised.
    """
    legacy = legacy or LegacyFiles()
    if kind == "static":
        count, threshold = 1, 1
    with file_lock(config):
        if sealed_file.read(config.keyring_file) is not None:
            raise SealMismatch(f"{config.keyring_file} exists: this deployment is initialised "
                               "already (see walletd operator status)")
        contents, found = legacy_contents(legacy, now_ms)
        seal, handed, recovery = _new_wrapper(config, kind, count, threshold)
        if kind == "static":  # development only: no recovery set to keep
            handed, recovery = [], None
        root = os.urandom(sealed_file.ROOT_BYTES)
        blank = SealedFile.new(seal=seal.describe(), wrapped_root="", root=root, contents=contents,
                               public=_public(contents), recovery=recovery)
        written = blank.with_contents(root, contents)
        written = replace(written, wrapped_root=seal.wrap(root, written.deployment))
        written = written.with_event("SEAL_INITIALISED", threshold=threshold, shares=count,
                                     importedFiles=sorted(Path(p).name for p in found))
        sealed_file.write(config.keyring_file, written, exclusive=True)
        _verify(config, written, seal, root, contents)
    for path in found:
        shred(path)
    if not quiet:
        log.info("seal: initialised (%s seal%s)", kind,
                 f", imported and removed {len(found)} plaintext key files" if found else "")
    return Outcome(shares=handed, threshold=0 if kind == "static" else threshold,
                   recovery=kind in AUTO_TYPES and kind != "static", imported=found,
                   seal_type=kind)


def import_legacy(config: SealConfig, root: bytes, legacy: LegacyFiles) -> list[str]:
    """Fold plaintext key files found after init into the sealed keyring, then shred them."""
    found = legacy.present()
    if not found:
        return []
    with file_lock(config):
        current = sealed_file.read(config.keyring_file)
        if current is None:
            raise SealMismatch("not initialised")
        imported, paths = legacy_contents(legacy, 0)
        existing = current.open(root)
        master = imported.master if legacy.master in paths else existing.master
        merged = Contents(master=master,
                          webhooks=imported.webhooks if legacy.webhooks in paths else existing.webhooks,
                          auth_proxy=imported.auth_proxy if legacy.auth_proxy in paths
                          else existing.auth_proxy)
        written = replace(current.with_contents(root, merged), public=_public(merged))
        written = written.with_event("KEY_FILES_IMPORTED",
                                     importedFiles=sorted(Path(p).name for p in paths))
        sealed_file.write(config.keyring_file, written)
        if written.open(root).to_bytes() != merged.to_bytes():
            raise Sealed("the imported keyring does not verify")
    for path in paths:
        shred(path)
    return paths


def current_file(config: SealConfig) -> SealedFile:
    current = sealed_file.read(config.keyring_file)
    if current is None:
        raise SealMismatch("not initialised: run `walletd operator init`")
    return current


def authorise(config: SealConfig, current: SealedFile, given: list[str]) -> bytes:
    """The root key, with the authority of ``given`` shares.

    Shamir: the unseal shares combine to the key that unwraps the root. Auto-unseal types:
    the recovery shares must verify (they decrypt nothing) and the seal unwraps the root.

    Raises:
        BadShare: too few, corrupted, or of another set.
    """
    if current.seal_type == "static":  # development only: the key file is the authority
        return auto_root(config, current)
    secret = shares.combine(given)
    if current.seal_type == "shamir":
        return ShamirSeal(secret).unwrap(current.wrapped_root, current.deployment)
    verifier = (current.recovery or {}).get("verifier", "")
    if not verifier or not shares.check_recovery(secret, verifier):
        raise BadShare("these are not this deployment's recovery shares")
    return auto_seal(current.seal_type, config).unwrap(current.wrapped_root, current.deployment)


def auto_root(config: SealConfig, current: SealedFile) -> bytes:
    """The root key via an auto-unseal seal (no shares needed)."""
    if current.seal_type not in AUTO_TYPES:
        raise SealMismatch("the shamir seal needs shares for this")
    return auto_seal(current.seal_type, config).unwrap(current.wrapped_root, current.deployment)


def rekey(config: SealConfig, given: list[str], count: int, threshold: int) -> Outcome:
    """New shares (unseal or recovery) for the same root key."""
    with file_lock(config):
        current = current_file(config)
        root = authorise(config, current, given)
        contents = current.open(root)
        seal, handed, recovery = _new_wrapper(config, current.seal_type, count, threshold)
        written = replace(current, seal=seal.describe(), recovery=recovery,
                          wrapped_root=seal.wrap(root, current.deployment))
        written = written.with_event("SEAL_REKEYED", threshold=threshold, shares=count)
        sealed_file.write(config.keyring_file, written)
        _verify(config, written, seal, root, contents)
    log.info("seal: rekeyed (%s seal, %d of %d)", current.seal_type, threshold, count)
    return Outcome(shares=handed, threshold=threshold, recovery=current.seal_type in AUTO_TYPES,
                   seal_type=current.seal_type)


def migrate(config: SealConfig, to: str, given: list[str], count: int, threshold: int) -> Outcome:
    """Unwrap with the old seal, wrap with ``to``: one atomic replacement of the file.

    Recovery shares carry over between auto-unseal types; moving to or from shamir hands out
    a new set (unseal shares, or recovery shares).
    """
    with file_lock(config):
        current = current_file(config)
        if current.seal_type == to:
            raise SealMismatch(f"the keyring is sealed with {to} already")
        root = authorise(config, current, given)
        contents = current.open(root)
        handed: list[str] = []
        recovery = current.recovery
        if to == "shamir" or current.seal_type in ("shamir", "static"):
            seal, handed, recovery = _new_wrapper(config, to, count, threshold)
        else:
            seal = auto_seal(to, config)
        written = replace(current, seal=seal.describe(), recovery=recovery,
                          wrapped_root=seal.wrap(root, current.deployment))
        written = written.with_event("SEAL_MIGRATED", fromSealType=current.seal_type,
                                     threshold=threshold if handed else 0, shares=len(handed))
        sealed_file.write(config.keyring_file, written)
        _verify(config, written, seal, root, contents)
    log.info("seal: migrated from %s to %s", current.seal_type, to)
    return Outcome(shares=handed, threshold=threshold if handed else 0,
                   recovery=to in AUTO_TYPES, seal_type=to)


def rotate_root(config: SealConfig, given: list[str]) -> int:
    """A new root key: the keyring re-encrypted and wrapped again; the new version."""
    with file_lock(config):
        current = current_file(config)
        root = authorise(config, current, given) if given else auto_root(config, current)
        contents = current.open(root)
        if current.seal_type == "shamir":
            seal: Seal = ShamirSeal(shares.combine(given))
        else:
            seal = auto_seal(current.seal_type, config)
        new_root = os.urandom(sealed_file.ROOT_BYTES)
        bumped = replace(current, root_version=current.root_version + 1)
        written = bumped.with_contents(new_root, contents)
        written = replace(written, wrapped_root=seal.wrap(new_root, current.deployment))
        written = written.with_event("ROOT_KEY_ROTATED")
        sealed_file.write(config.keyring_file, written)
        _verify(config, written, seal, new_root, contents)
    log.info("seal: root key rotated to version %d", written.root_version)
    return written.root_version


def webhook_ring(contents: Contents) -> WebhookKeyRing:
    return keyring_from_json(contents.webhooks)
