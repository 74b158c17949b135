"""Wiring of the audit log (ONE place; moves into ``infra.bootstrap`` with the house refactor).

* lifecycle listener :func:`infra.audit.leaves.on_activity_change` (last in ``LISTENERS``, so
  it records what the other listeners left, e.g. redacted intents);
* worker hook: the log key's custody (``services.extras[LOG_KEYS]``), created on first start,
  and this process's boot record (``infra.audit.boots``);
* lifecycle listener :func:`infra.audit.boots.on_completed` (app proofs, after the leaf);
* discovery: ``auditLogVerifierKey`` and ``auditLogOrigin``.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from sqlalchemy.orm import Session

from infra.audit import boots, log_key, note
from infra.audit.leaves import on_activity_change
from infra.bootstrap import WORKER_HOOKS
from infra.discovery import DISCOVERY_KEYS
from infra.errors import Internal
from infra.pipeline.lifecycle import LISTENERS
from infra.wallets import extension as wallets_extension  # noqa: F401  (custody hook first)
from infra.wallets.custody import custody_of

log = logging.getLogger(__name__)

LOG_KEYS: Final = "audit.log_keys"


def install(services: Any) -> None:
    """``WORKER_HOOKS`` entry (after the custody's): the log key, created on first start;
    in worker processes, this boot's key and its signed boot record."""
    keys = log_key.LogKeys(custody_of(services))
    services.extras[LOG_KEYS] = keys
    try:
        with services.session_factory() as session:
            key = keys.get(session)
    except Exception:  # tables may not exist yet (before ``walletd migrate``)
        log.info("audit log key not initialised yet; created on first use")
        return
    if services.role in ("worker", "embedded") and "key" not in boots.CURRENT:
        boot = boots.BootKey.generate()
        try:
            with services.uow() as uow:
                boots.record_boot(uow.session, boot, key, services.settings, services.role)
                uow.commit()
        except Exception:  # no record, no key: this process makes no app proofs
            log.exception("could not record this process's boot; it makes no app proofs")
            return
        boots.CURRENT["key"] = boot


def log_keys(services: Any) -> log_key.LogKeys:
    """The log key of a worker-type process (``Internal`` anywhere else)."""
    keys = services.extras.get(LOG_KEYS) if services is not None else None
    if not isinstance(keys, log_key.LogKeys):
        raise Internal("the audit log key is not available in this process")
    return keys


def discovery_section(session: Session) -> dict[str, Any]:
    """The log's verifier key and origin once the key exists (nothing before)."""
    public = log_key.public_key(session)
    if public is None:
        return {}
    origin = log_key.origin_of(public)
    return {"auditLogOrigin": origin, "auditLogVerifierKey": note.verifier_key(origin, public)}


if discovery_section not in DISCOVERY_KEYS:
    DISCOVERY_KEYS.append(discovery_section)
if install not in WORKER_HOOKS:
    WORKER_HOOKS.append(install)
if on_activity_change not in LISTENERS:
    LISTENERS.append(on_activity_change)
if boots.on_completed not in LISTENERS:
    LISTENERS.append(boots.on_completed)
