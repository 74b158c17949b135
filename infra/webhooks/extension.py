"""Plugging webhooks into the shared mechanisms (listed in ``infra/extensions.py``).

* the outbox listener on every activity creation and status change;
* a hook for every role that keeps the outbox's knowledge of organizations without
  endpoints in step with PostgreSQL's ``walletd_endpoints_changed`` notifications;
* a worker hook that opens the signing key ring under the data directory and publishes its
  public keys for the JWKS endpoint (worker, embedded and CLI roles only: the ingress never
  opens the private ring), and lets the outbox hand new rows to the broker at commit.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import SQLAlchemyError

from infra.bootstrap import SERVICE_HOOKS, WORKER_HOOKS, Services
from infra.messaging import contracts
from infra.pipeline import lifecycle
from infra.seal.holders import SealedKeyRing
from infra.seal.wiring import seal_of
from infra.webhooks import keystore, outbox

log = logging.getLogger(__name__)

#: ``services.extras`` key of the :class:`~infra.webhooks.keystore.KeyRingFile`.
KEYRING = "webhook_keyring"


def open_keyring(services: Services) -> None:
    """Worker hook: the ring from the seal; its public keys published once unsealed."""
    state = seal_of(services)
    holder = SealedKeyRing(state)
    services.extras[KEYRING] = holder
    broker = services.broker

    def dispatch(ids: list[str]) -> None:
        for delivery_id in ids:
            contracts.send_deliver_webhook(broker, delivery_id)

    outbox.set_dispatcher(dispatch)

    def publish(sealed: bool) -> None:
        if sealed:
            return
        try:
            with services.uow() as uow:
                keystore.publish(uow.session, holder.ring())
                uow.commit()
        except SQLAlchemyError:
            log.warning("webhook signing keys not published (database not migrated yet?)")

    state.listeners.append(publish)
    publish(state.sealed)


if outbox.on_activity_change not in lifecycle.LISTENERS:
    lifecycle.LISTENERS.append(outbox.on_activity_change)
def watch_endpoints(services: Services) -> None:
    """Every role: forget organizations without endpoints when endpoints change."""
    if services.role != "cli" and services.listener is not None:
        outbox.ENDPOINT_ABSENCE.watch(services.listener)


if watch_endpoints not in SERVICE_HOOKS:
    SERVICE_HOOKS.append(watch_endpoints)
if open_keyring not in WORKER_HOOKS:
    WORKER_HOOKS.append(open_keyring)
