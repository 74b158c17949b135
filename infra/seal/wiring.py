"""A process's seal, built from its settings: ``infra.bootstrap`` calls :func:`open_seal` for
worker-type roles and keeps it in ``WorkerServices.seal``; custody, the service keys and the
webhook ring are built over it (``infra.seal.holders``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from infra.clock import now_ms
from infra.errors import Internal
from infra.seal import sealed_file
from infra.seal.admin import AdminSocket, check_listener_directory
from infra.seal.config import SealConfig
from infra.seal.errors import Sealed, SealMismatch, StaticSealRefused, UnsafeSocketDirectory
from infra.seal.operations import LegacyFiles, import_legacy, initialise
from infra.seal.state import SealState, resolve_type
from infra.settings import Settings

if TYPE_CHECKING:
    from infra.services import Services

log = logging.getLogger("walletd.seal")

STATIC_WARNING = ("seal: the static seal is for DEVELOPMENT ONLY: its key file sits beside the "
                  "data, so whoever copies the data dir has every key (set WALLETD_SEAL=shamir, "
                  "transit, pkcs11 or awskms in production; docs/CUSTODY.md)")


#: The documented opt-in that lets a production process run under the static seal.
ALLOW_STATIC = "WALLETD_SEAL_ALLOW_STATIC"


def seal_config(settings: Settings) -> SealConfig:
    """The seal configuration of ``settings`` (``WALLETD_SEAL*`` as captured by them)."""
    return SealConfig.from_env(dict(settings.seal_env), settings.data_dir,
                               settings.effective_keyring_file)


def legacy_files(settings: Settings) -> LegacyFiles:
    """Where an older deployment kept its keys in clear."""
    return LegacyFiles(
        master=settings.master_key_file or str(settings.data_dir / "master-keys.json"),
        webhooks=str(settings.data_dir / "webhook-signing-keys.json"),
        auth_proxy=settings.auth_proxy_key_file or str(settings.data_dir / "auth-proxy-key.json"),
    )


def build_state(settings: Settings, label: str = "") -> SealState:
    """A sealed :class:`SealState` for ``settings`` (nothing unwrapped yet)."""
    config = seal_config(settings)
    legacy = legacy_files(settings)

    def initialise_static(cfg: SealConfig, kind: str) -> None:
        try:
            outcome = initialise(cfg, kind, legacy=legacy, now_ms=now_ms())
        except Exception as ex:  # another process initialised it first: use theirs
            log.info("seal: static initialisation skipped (%s)", type(ex).__name__)
            return
        if outcome.imported:
            log.warning("seal: imported %s into the sealed keyring and removed them",
                        ", ".join(outcome.imported))

    state = SealState(config, default_type=settings.seal_default, initialise=initialise_static,
                      label=label)

    def upgrade_static(sealed: bool) -> None:
        # walletd up on a data dir that still has plaintext files next to its sealed keyring.
        if not sealed and state.type == "static" and legacy.present():
            root, _ = state.root_for_operator()
            import_legacy(config, root, legacy)

    state.listeners.append(upgrade_static)
    return state


def production(settings: Settings) -> bool:
    """Whether ``settings`` are a production command's: every command but ``walletd up``
    (and in-process library use) defaults to shamir (``walletd.cli``)."""
    return settings.seal_default != "static"


def configured_type(settings: Settings) -> str:
    """The seal type a process of ``settings`` will run: ``WALLETD_SEAL``, else the type the
    sealed keyring records, else the default ("" when that cannot be told: the process then
    stays sealed and says why)."""
    config = seal_config(settings)
    try:
        return resolve_type(config, sealed_file.read(config.keyring_file), settings.seal_default)
    except (Sealed, SealMismatch):
        return ""


def refuse_static(settings: Settings) -> None:
    """A production process does not run under the static seal (whose key file sits beside
    the data) unless ``WALLETD_SEAL_ALLOW_STATIC`` says so: a data dir promoted from
    ``walletd up`` does not silently become "whoever reads the disk has every key".

    Raises:
        StaticSealRefused: naming the setting.
    """
    if (production(settings) and not seal_config(settings).allow_static
            and configured_type(settings) == "static"):
        raise StaticSealRefused(
            "the static seal is refused in production: its key file sits beside the data, so "
            "whoever reads the disk has every key. Initialise another seal (WALLETD_SEAL=shamir "
            "`walletd operator seal-migrate --to shamir`, or transit, pkcs11, awskms), or set "
            f"{ALLOW_STATIC}=true to accept that risk (docs/CUSTODY.md)")


def preflight(settings: Settings, *, socket_always: bool = False) -> None:
    """What a production process (``walletd worker``, ``walletd auth-proxy``) checks before it
    starts: the static seal's opt-in, and for shamir (or ``socket_always``) a socket directory
    of its own that nobody else can write.

    Raises:
        StaticSealRefused, UnsafeSocketDirectory: the process must not start.
    """
    refuse_static(settings)
    if socket_always or configured_type(settings) == "shamir":
        check_listener_directory(seal_config(settings).socket_dir)


def _listen(state: SealState, kind: str) -> None:
    """The admin socket of a worker or ``walletd up``: required under shamir (the only way
    shares reach the process), best effort for the seals that unseal themselves."""
    try:
        state.admin = AdminSocket(state, state.config.socket_dir)
    except UnsafeSocketDirectory as err:
        if kind == "shamir":
            raise
        log.warning("seal: no admin socket: %s", err.message)
    except OSError as ex:
        log.warning("seal: no admin socket under %s (%s): `walletd operator unseal` cannot "
                    "reach this process", state.config.socket_dir, ex.strerror)


def open_seal(settings: Settings, role: str, label: str = "") -> SealState:
    """The seal of a worker-type process, started: auto seals unseal now (or keep retrying);
    worker and embedded processes listen on their admin socket for ``walletd operator``.

    Raises:
        StaticSealRefused: a production worker found the static seal without its opt-in.
        UnsafeSocketDirectory: a shamir worker's socket directory is not its own alone.
    """
    if role == "worker":
        refuse_static(settings)
    state = build_state(settings, label=label or role)
    if role in ("worker", "embedded"):
        _listen(state, configured_type(settings))
        state.start()
    else:
        state.try_auto_unseal(quiet=True)
    if state.type == "static" and not state.sealed:
        log.warning(STATIC_WARNING)
    return state


def current_seal(services: Services) -> SealState | None:
    """The seal if this process has one (worker-type roles; ``None`` in the ingress)."""
    state = getattr(services, "seal", None)
    return state if isinstance(state, SealState) else None


def seal_of(services: Services) -> SealState:
    """The seal of a worker-type process (``Internal`` anywhere else)."""
    state = current_seal(services)
    if state is None:
        raise Internal("this process has no seal (the ingress never holds a key)")
    return state


def seal_statuses(services: Services) -> list[dict[str, Any]]:
    """The seal of this process as ``walletd operator status`` reports it (none: no seal)."""
    state = current_seal(services)
    return [state.status()] if state is not None else []
