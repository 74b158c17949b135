"""A process's seal, built from its settings (the composition root calls :func:`seal_of`).

Until the typed worker services land, the state lives in ``services.extras[SEAL]``; every
concept that needs keys (custody, service keys, webhook signing) asks :func:`seal_of`.
"""

from __future__ import annotations

import logging
from typing import Any

from infra.clock import now_ms
from infra.seal.admin import AdminSocket
from infra.seal.config import SealConfig
from infra.seal.operations import LegacyFiles, import_legacy, initialise
from infra.seal.state import SealState
from infra.settings import Settings

log = logging.getLogger("walletd.seal")

SEAL = "seal.state"
ADMIN = "seal.admin"
STATIC_WARNING = ("seal: the static seal is for DEVELOPMENT ONLY: its key file sits beside the "
                  "data, so whoever copies the data dir has every key (set WALLETD_SEAL=shamir, "
                  "transit, pkcs11 or awskms in production; docs/CUSTODY.md)")


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


def seal_of(services: Any) -> SealState:
    """The process's seal, built and started on first use (worker-type roles only)."""
    state = services.extras.get(SEAL)
    if isinstance(state, SealState):
        return state
    state = build_state(services.settings, label=services.role)
    services.extras[SEAL] = state
    if services.role in ("worker", "embedded"):
        try:
            services.extras[ADMIN] = AdminSocket(state, state.config.socket_dir)
        except OSError as ex:
            log.warning("seal: no admin socket under %s (%s): `walletd operator unseal` cannot "
                        "reach this process", state.config.socket_dir, ex.strerror)
        state.start()
    else:
        state.try_auto_unseal(quiet=True)
    if state.type == "static" and not state.sealed:
        log.warning(STATIC_WARNING)
    return state


#: ``services.extras`` key of a callable giving the seal statuses of other processes this one
#: answers for (``walletd worker --processes N``: its children).
STATUSES = "seal.statuses"


def seal_statuses(services: Any) -> list[dict[str, Any]]:
    """The seal of this process, or of the processes it reports for (none: no seal)."""
    state = current_seal(services)
    if state is not None:
        return [state.status()]
    others = services.extras.get(STATUSES) if services is not None else None
    return list(others()) if callable(others) else []


def current_seal(services: Any) -> SealState | None:
    """The seal if this process has one (``None`` in the ingress)."""
    state = services.extras.get(SEAL) if services is not None else None
    return state if isinstance(state, SealState) else None
