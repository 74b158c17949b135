"""What a worker-type process runs with: ``Services`` plus key material.

Worker-type roles (``worker``, ``embedded``, ``cli``) get :class:`WorkerServices` from
``infra.bootstrap``; the ingress never does (its settings carry no master-key location). Code
that needs a key asks :func:`custody_of` / :func:`service_keys`, which refuse anything but a
worker's services.
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.audit.log_key import LogKeys
from infra.errors import Internal
from infra.seal.holders import SealedKeyRing
from infra.seal.state import SealState
from infra.services import Services
from infra.sessions.email_events import EventWriter
from infra.sessions.service_keys import ServiceKeys
from infra.wallets.custody import Custody


@dataclass(frozen=True, kw_only=True)
class WorkerServices(Services):
    """A worker-type process's services: :class:`Services` plus its key material.

    Attributes:
        custody: The master keyring and the bundle signer.
        service_keys: The service's login, verification-token and encryption keys.
        webhook_keys: The webhook signing key ring.
        log_keys: The audit log's signing key (``infra.audit``; checkpoints, boot records).
        seal: The process's seal (docs/CUSTODY.md): the keys above raise ``Sealed`` until
            it is unsealed.
        email_events: The writer of what the process's SMTP hop saw (``list_email_events``);
            its thread is started by the role's entry point (``walletd.processes``).
    """

    custody: Custody
    service_keys: ServiceKeys
    webhook_keys: SealedKeyRing
    log_keys: LogKeys
    seal: SealState
    email_events: EventWriter


def custody_of(services: Services) -> Custody:
    """The custody of a worker process (``Internal`` anywhere else)."""
    if not isinstance(services, WorkerServices):
        raise Internal("key custody is not available in this process")
    return services.custody


def service_keys(services: Services) -> ServiceKeys:
    """The service keys of a worker process (``Internal`` anywhere else)."""
    if not isinstance(services, WorkerServices):
        raise Internal("service keys are not available in this process")
    return services.service_keys


def log_keys(services: Services) -> LogKeys:
    """The audit log key of a worker process (``Internal`` anywhere else)."""
    if not isinstance(services, WorkerServices):
        raise Internal("the audit log key is not available in this process")
    return services.log_keys


def email_events_of(services: Services) -> EventWriter:
    """The email event writer of a worker process (``Internal`` anywhere else)."""
    if not isinstance(services, WorkerServices):
        raise Internal("the email event log is written by worker processes only")
    return services.email_events
