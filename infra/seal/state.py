"""One process's seal: sealed until the root key is unwrapped, then the keyring in memory.

A worker-type process builds one :class:`SealState` at start. Auto-unseal types (static,
transit, pkcs11, awskms) unwrap the root key at once and, while their backend is unreachable,
stay sealed and retry every ``WALLETD_SEAL_RETRY_S`` saying why (``reason``). The shamir seal
waits for shares (``submit_share``, reached through :mod:`infra.seal.admin`); progress lives
in this object only and is forgotten after ``WALLETD_SEAL_UNSEAL_TIMEOUT_S``.

While sealed, :meth:`contents` raises :class:`Sealed`; listeners (``on_change``) start and
stop what needs keys (the key-needing queues' consumers). The root key stays in memory so
the process can re-read the keyring after another process changed it (``walletd keys
rotate``, ``walletd webhooks rotate-key``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.seal import sealed_file, shares
from infra.seal.config import AUTO_TYPES, TYPES, SealConfig
from infra.seal.errors import BadShare, Sealed, SealMismatch, SealUnavailable
from infra.seal.sealed_file import Contents, SealedFile
from infra.seal.seals import ShamirSeal, auto_seal

log = logging.getLogger("walletd.seal")

RELOAD_CHECK_S = 1.0


def resolve_type(config: SealConfig, sealed: SealedFile | None, default: str) -> str:
    """The seal type in force: ``WALLETD_SEAL``, else the file's record, else ``default``."""
    kind = config.type or (sealed.seal_type if sealed else "") or default
    if kind not in TYPES:
        raise SealMismatch(f"WALLETD_SEAL={kind!r} is not a seal type; one of {', '.join(TYPES)}")
    return kind


@contextmanager
def file_lock(config: SealConfig) -> Iterator[None]:
    """Serialise writers of the sealed keyring (processes of this host)."""
    path = Path(config.keyring_file + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@dataclass
class _Held:
    root: bytes
    sealed: SealedFile
    contents: Contents
    stamp: tuple[int, int]


class SealState:
    """The seal of this process."""

    def __init__(self, config: SealConfig, *, default_type: str = "shamir",
                 initialise: Callable[[SealConfig, str], None] | None = None,
                 label: str = "") -> None:
        self.config = config
        self.default_type = default_type
        self.label = label
        self._initialise = initialise  # creates a static keyring on first start (dev only)
        self._lock = threading.RLock()
        self._held: _Held | None = None
        self._progress = shares.Progress()
        self._checked = 0.0
        self._stop = threading.Event()
        self._retrying: threading.Thread | None = None
        self._operator_sealed = False
        self.reason = "not started"
        self.type = config.type or default_type
        self.listeners: list[Callable[[bool], None]] = []
        self.unsealed_at = 0.0
        self.admin: Any = None  # the process's admin socket, when it listens on one

    # -- state ----------------------------------------------------------------------------
    @property
    def sealed(self) -> bool:
        return self._held is None

    def status(self) -> dict[str, Any]:
        """``operator status`` of this process (no secret)."""
        with self._lock:
            self._expire_progress()
            meta = self._read_quietly()
            threshold = 0
            if meta is not None and meta.seal_type == "shamir":
                threshold = int(meta.seal.get("threshold", 0))
            return {"sealed": self.sealed, "type": self.type, "threshold": threshold,
                    "progress": self._progress.count, "version": meta.root_version if meta else 0,
                    "initialized": meta is not None, "reason": "" if not self.sealed else self.reason,
                    "recovery": bool(meta and meta.recovery), "pid": os.getpid(),
                    "process": self.label}

    def contents(self, fresh: bool = False) -> Contents:
        """The keyring, re-read when the file changed (looked at once a second, or now when
        ``fresh``: the webhook ring, whose emergency rotation must apply at once).

        Raises:
            Sealed: the process holds no root key.
        """
        held = self._held
        if held is None:
            raise Sealed(f"the service is sealed ({self.reason})")
        now = time.monotonic()
        if fresh or now - self._checked >= RELOAD_CHECK_S:
            self._checked = now
            if sealed_file.stamp(self.config.keyring_file) != held.stamp:
                self._reload(held)
                held = self._held or held
        return held.contents

    def force_reload(self) -> None:
        """Re-read the keyring now (a master-key version unknown here was named)."""
        held = self._held
        if held is not None:
            self._checked = time.monotonic()
            self._reload(held)

    def _reload(self, held: _Held) -> None:
        with self._lock:
            try:
                stamp = sealed_file.stamp(self.config.keyring_file)
                current = sealed_file.read(self.config.keyring_file)
                if current is None:
                    return
                root = held.root
                if current.root_version != held.sealed.root_version:
                    if current.seal_type not in AUTO_TYPES:
                        log.warning("seal: the root key was rotated; this process keeps its "
                                    "keyring in memory until it is unsealed again")
                        return
                    root = auto_seal(current.seal_type, self.config).unwrap(
                        current.wrapped_root, current.deployment)
                self._held = _Held(root, current, current.open(root), stamp)
                self.type = current.seal_type
            except (Sealed, SealUnavailable, SealMismatch) as err:
                log.warning("seal: the changed keyring could not be read (%s); keeping the "
                            "one in memory", err.message)

    def _read_quietly(self) -> SealedFile | None:
        try:
            return sealed_file.read(self.config.keyring_file)
        except Sealed:
            return None

    # -- unsealing ------------------------------------------------------------------------
    def start(self) -> None:
        """Try to unseal now; keep retrying in the background while an auto seal cannot."""
        self.try_auto_unseal()
        if self.sealed and self._retrying is None:
            self._retrying = threading.Thread(target=self._retry_loop, name="walletd-seal-retry",
                                              daemon=True)
            self._retrying.start()

    def stop(self) -> None:
        self._stop.set()

    def _retry_loop(self) -> None:
        while not self._stop.wait(self.config.retry_s):
            if self.sealed and not self._operator_sealed:
                self.try_auto_unseal(quiet=True)

    def try_auto_unseal(self, quiet: bool = False) -> bool:
        """Unseal with the configured auto seal (or note why not); ``True`` once unsealed."""
        with self._lock:
            if not self.sealed:
                return True
            try:
                current = sealed_file.read(self.config.keyring_file)
                kind = resolve_type(self.config, current, self.default_type)
                self.type = kind
                if current is None:
                    if kind == "static" and self._initialise is not None:
                        self._initialise(self.config, kind)
                        current = sealed_file.read(self.config.keyring_file)
                    if current is None:
                        return self._note(f"not initialised: run `walletd operator init` "
                                          f"(WALLETD_SEAL={kind})", quiet)
                if current.seal_type != kind:
                    return self._note(f"the keyring is sealed with {current.seal_type} but "
                                      f"WALLETD_SEAL={kind}: run `walletd operator seal-migrate "
                                      f"--to {kind}` or set WALLETD_SEAL={current.seal_type}", quiet)
                if kind not in AUTO_TYPES:
                    return self._note(f"waiting for unseal shares (0 of "
                                      f"{current.seal.get('threshold', '?')})", True)
                root = auto_seal(kind, self.config).unwrap(current.wrapped_root,
                                                           current.deployment)
                self._unsealed(root, current)
                return True
            except (Sealed, SealUnavailable, SealMismatch) as err:
                return self._note(err.message, quiet)

    def _note(self, reason: str, quiet: bool) -> bool:
        if reason != self.reason or not quiet:
            log.warning("seal: sealed: %s", reason)
        self.reason = reason
        return False

    def _unsealed(self, root: bytes, current: SealedFile) -> None:
        contents = current.open(root)  # raises Sealed on a tampered file
        self._held = _Held(root, current, contents, sealed_file.stamp(self.config.keyring_file))
        self._operator_sealed = False
        self.reason = ""
        self.unsealed_at = time.time()
        log.info("seal: unsealed (%s seal, root key version %d)", current.seal_type,
                 current.root_version)
        self._notify(False)

    def _expire_progress(self) -> None:
        started = self._progress.started
        if started and time.monotonic() - started > self.config.unseal_timeout_s:
            log.info("seal: unseal progress reset after %.0f s without completion",
                     self.config.unseal_timeout_s)
            self._progress.reset()

    def submit_share(self, mnemonic: str) -> dict[str, Any]:
        """One unseal share (shamir); the status after it. Never logs or keeps the share
        beyond the threshold's combination."""
        with self._lock:
            if not self.sealed:
                return self.status()
            current = sealed_file.read(self.config.keyring_file)
            if current is None:
                raise SealMismatch("not initialised: run `walletd operator init` first")
            if current.seal_type != "shamir":
                raise SealMismatch(f"this deployment uses the {current.seal_type} seal, which "
                                   "unseals itself; shares here are recovery shares (rekey, "
                                   "migration), not unseal shares")
            self._expire_progress()
            try:
                complete = self._progress.add(mnemonic, time.monotonic())
            except BadShare:
                log.warning("seal: an unseal share was refused (malformed or of another set)")
                raise
            log.info("seal: unseal share accepted (%d of %d)", self._progress.count,
                     self._progress.threshold)
            if complete:
                collected = self._progress.take()
                try:
                    kek = shares.combine(collected)
                    root = ShamirSeal(kek).unwrap(current.wrapped_root, current.deployment)
                    self._unsealed(root, current)
                except (BadShare, Sealed) as err:
                    log.warning("seal: the unseal shares did not open the root key; progress "
                                "reset")
                    self.reason = "the last unseal attempt failed: " + err.message
                    raise BadShare("the shares entered do not unseal this deployment (a share "
                                   "of another set, or a corrupted one); progress was reset, "
                                   "start again") from None
            return self.status()

    def reset_progress(self) -> None:
        with self._lock:
            self._progress.reset()

    def seal(self) -> dict[str, Any]:
        """Drop the root key and the keyring (``walletd operator seal``)."""
        with self._lock:
            was = self._held is not None
            self._held = None
            self._operator_sealed = True
            self._progress.reset()
            self.reason = "sealed by an operator (walletd operator seal)"
            if was:
                log.warning("seal: sealed by an operator")
                self._notify(True)
            return self.status()

    def resume_auto(self) -> dict[str, Any]:
        """``walletd operator unseal`` without a share: auto seals try again now."""
        with self._lock:
            self._operator_sealed = False
            self.try_auto_unseal()
            return self.status()

    def _notify(self, sealed: bool) -> None:
        for listener in list(self.listeners):
            try:
                listener(sealed)
            except Exception:  # a listener must not keep the others from running
                log.exception("seal listener failed")

    # -- writing the keyring under the held root key ----------------------------------------
    def update(self, change: Callable[[Contents], Contents]) -> Contents:
        """Re-encrypt the keyring with ``change`` applied (master-key or webhook rotation).

        Raises:
            Sealed: this process holds no root key.
        """
        with file_lock(self.config), self._lock:
            held = self._held
            if held is None:
                raise Sealed(f"the service is sealed ({self.reason})")
            current = sealed_file.read(self.config.keyring_file)
            if current is None:
                raise Sealed("the sealed keyring file disappeared")
            contents = change(current.open(held.root))
            updated = current.with_contents(held.root, contents)
            sealed_file.write(self.config.keyring_file, updated)
            self._held = _Held(held.root, updated, contents,
                               sealed_file.stamp(self.config.keyring_file))
            return contents

    def root_for_operator(self) -> tuple[bytes, SealedFile]:
        """The held root key and file (CLI processes: migration, root rotation)."""
        held = self._held
        if held is None:
            raise Sealed(f"the service is sealed ({self.reason})")
        return held.root, held.sealed

    def unseal_with(self, root: bytes, current: SealedFile) -> None:
        """Adopt a root key obtained by the caller (CLI with shares)."""
        with self._lock:
            self._unsealed(root, current)
