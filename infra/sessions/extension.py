"""Plugs sessions into shared mechanisms: service keys in workers, discovery, stamp schemes."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from infra.bootstrap import WORKER_HOOKS
from infra.discovery import DISCOVERY_KEYS
from infra.errors import Internal, Unavailable
from infra.pipeline.lifecycle import LISTENERS
from infra.seal.wiring import seal_of
from infra.sessions import attested as attested_scheme  # noqa: F401  (X-Stamp-Attested)
from infra.sessions import redaction
from infra.sessions.otp import count_failed_attempt
from infra.sessions.service_keys import DISCOVERY_NAMES, ServiceKeys, current_public_key
from infra.wallets import extension as wallets_extension  # noqa: F401  (custody hook first)
from infra.wallets.custody import custody_of

log = logging.getLogger(__name__)

SERVICE_KEYS = "sessions.service_keys"


def install(services: Any) -> None:
    """``WORKER_HOOKS`` entry (after the wallets' custody): create missing service keys."""
    keys = ServiceKeys(custody_of(services))
    services.extras[SERVICE_KEYS] = keys

    def ensure(sealed: bool) -> None:
        if sealed:
            return
        try:
            with services.session_factory() as session:
                keys.ensure_all(session)
        except Exception:  # tables may not exist yet (before ``walletd migrate``)
            log.info("service login keys not initialised yet; created on first use")

    state = seal_of(services)  # sealed: made once the process is unsealed
    state.listeners.append(ensure)
    ensure(state.sealed)


def service_keys(services: Any) -> ServiceKeys:
    """The service keys of a worker process (``Internal`` anywhere else)."""
    keys = services.extras.get(SERVICE_KEYS) if services is not None else None
    if not isinstance(keys, ServiceKeys):
        raise Internal("service keys are not available in this process")
    return keys


def discovery_section(session: Session) -> dict[str, Any]:
    """``notarizerPublicKey``, ``verificationTokenPublicKey``, ``encryptionPublicKey``.

    Raises:
        Unavailable: a key does not exist yet (no worker has started on this database).
    """
    out: dict[str, Any] = {}
    for purpose, wire in DISCOVERY_NAMES.items():
        public = current_public_key(session, purpose)
        if not public:
            raise Unavailable(
                f"the service {purpose} key does not exist yet; it is created when the first "
                "worker starts (walletd worker or walletd up): retry shortly")
        out[wire] = public
    return out


if discovery_section not in DISCOVERY_KEYS:
    DISCOVERY_KEYS.append(discovery_section)
if install not in WORKER_HOOKS:
    WORKER_HOOKS.append(install)
if count_failed_attempt not in LISTENERS:
    LISTENERS.append(count_failed_attempt)
redaction.install(LISTENERS)
