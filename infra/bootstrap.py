"""Composition root: ``bootstrap(settings, role)`` builds everything a process runs.

Read it top to bottom: nothing else wires anything, and no module changes process-wide
behaviour by being imported. Nothing connects at import time. Only worker-type roles get key
material (:class:`~infra.worker_services.WorkerServices`); the ingress role's settings carry no
master-key location at all and its :class:`~infra.services.Services` has no field for a key.

What is wired here, in order:

1. the activity status listeners (``ACTIVITY_LISTENERS``; order matters, see the comments);
2. the stamp headers the API accepts (``stamps()``);
3. the database: engine, session factories, quota enforcement on every flush;
4. for worker-type roles: the seal (docs/CUSTODY.md), and over it custody (master keyring,
   bundle signer), service keys, the webhook signing key ring, the audit log key and this
   boot's record (worker processes also sign app proofs); the outbox's hand-off to the broker;
5. process-wide subscriptions (endpoint-change notifications, access-control changes, the
   ingress's waiter).

Threads: the only ones started here are the composition's own (the ``LISTEN`` connection,
the seal's admin socket and retries, the in-process broker's time limits); a worker-type
process's pools and background loops (sweepers, the audit log, the webhook relay, broadcast,
seal reports, the email event writer) are started by the role's entry point from one table,
``walletd.processes.LOOPS``, which also names these (the kernel cannot name the service
packages' loops: it imports none of them). Nothing starts a thread on first use.

Static extension tables that are read where they are used, each one tuple written once:
``infra.views.users.USER_SECTIONS`` (``v1User``), ``infra.queries.get_organization.
ORGANIZATION_SECTIONS``, ``infra.discovery.DISCOVERY_KEYS``, ``infra.wallets.custody.
SEALED_TABLES``, ``infra.sessions.redaction.SECRET_FIELDS``, ``infra.sessions.oidc.
AUDIENCE_SOURCES``; the ``canApprove``/``canReject`` rule is ``infra.pipeline.votes.
vote_rights`` (imported by ``infra.views.activities``); user creation takes its OIDC sign-up
hook as an argument (``on_oidc_token=infra.sessions.oidc_login.spend_signup``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from functools import partial
from typing import Final

import dramatiq
from sqlalchemy.exc import SQLAlchemyError

from infra.access import ip_allowlist, session_profiles
from infra.audit import boots
from infra.audit import leaves as audit_leaves
from infra.audit.log_key import LogKeys
from infra.auth import principal
from infra.auth.attested import HEADER_ATTESTED, AttestedStamps
from infra.auth.principal import API_KEY_LOCATOR, Stamps
from infra.auth.stamps import HEADER_API_KEY, HEADER_WEBAUTHN
from infra.authproxy import invalidation
from infra.db.engine import make_engine, make_read_session_factory, make_session_factory
from infra.db.unit_of_work import ActivityListener
from infra.identity import passkeys, quotas
from infra.messaging import actor_messages, queues
from infra.messaging.broker import build_broker
from infra.observability import activities as activity_metrics
from infra.pipeline import mfa
from infra.pipeline.lifecycle import Settlements
from infra.seal.holders import SealedKeyRing, custody_of_seal
from infra.seal.wiring import open_seal
from infra.services import Services
from infra.sessions import attested as attested_tokens
from infra.sessions import attested_oidc, otp, redaction
from infra.sessions.email_events import EventWriter
from infra.sessions.service_keys import ServiceKeys
from infra.settings import Role, Settings
from infra.wallets import store
from infra.webhooks import keystore, outbox
from infra.worker_services import WorkerServices

__all__ = ["ACTIVITY_LISTENERS", "Services", "WorkerServices", "bootstrap", "stamps"]

log = logging.getLogger(__name__)

#: Roles that hold key material (and so get ``WorkerServices``).
KEY_HOLDING_ROLES: Final = frozenset({"worker", "embedded", "cli"})

#: Called as ``listener(uow, activity, previous_status)`` on every activity creation and status
#: change, in this order, inside the transaction of the change (``infra.pipeline.lifecycle``).
#: ``Services.uow()`` appends the process's ``Settlements.on_activity_change`` last.
ACTIVITY_LISTENERS: Final[tuple[ActivityListener, ...]] = (
    # 1. Secrets first: one-time codes, verification tokens, OIDC tokens and authorization codes
    #    are sealed out of the stored body, intent and vote message on creation, and redacted
    #    once settled, BEFORE any listener below renders the activity (the webhook outbox
    #    copies the rendered activity into delivery rows). Pinned by
    #    tests/unit/test_bootstrap.py.
    redaction.seal_on_create,
    redaction.redact_on_settle,
    # 2. A code activity that failed with a wrong code spends its attempt again (its own
    #    spend rolled back with the failed execution).
    otp.count_failed_attempt,
    # 3. The webhook outbox: ACTIVITY_UPDATES delivery rows in the same transaction.
    outbox.on_activity_change,
    # 4. Auth proxy configuration changes are published to proxy processes after commit.
    invalidation.on_activity_change,
    # 5. Log line and metrics of the committed change; binds the ids to the log context.
    activity_metrics.on_activity_change,
    # 6. The audit log's leaf of the change (one insert, same transaction), after the
    #    redaction above so it digests what is stored. Worker-type processes add their app
    #    proofs right after it (``_app_proofs``): a proof commits to this leaf.
    audit_leaves.on_activity_change,
)


def stamps() -> Stamps:
    """The stamp headers the API accepts besides ``X-Stamp`` (API keys, always tried first),
    in order, and where each header's credential lives (downward resolution)."""
    attested = AttestedStamps({
        attested_tokens.SCHEME: attested_tokens.ATTESTED_SCHEME,  # verification tokens
        attested_oidc.SCHEME: attested_oidc.ATTESTED_SCHEME,      # OIDC ID tokens
    })
    return Stamps(
        verifiers={HEADER_WEBAUTHN: passkeys.verify_webauthn_stamp,
                   HEADER_ATTESTED: attested.verify},
        locators={HEADER_API_KEY: API_KEY_LOCATOR,
                  HEADER_WEBAUTHN: passkeys.LOCATOR,
                  HEADER_ATTESTED: attested.locator},
    )


def bootstrap(settings: Settings, role: Role, *, broker: dramatiq.Broker | None = None,
              label: str = "", queue_names: Iterable[str] | None = None,
              threads: int | None = None, settlements: Settlements | None = None) -> Services:
    """Build the services of a ``role`` process from ``settings``.

    ``label`` (e.g. the queues a worker consumes) is appended to the database
    application name so operators can tell processes apart. ``queue_names`` (default: every
    queue) and ``threads`` (default: each queue's setting) size the connection pool of a
    worker-type process: every queue has its own pool of threads. ``settlements``: another
    services' in-process announcement of settled activities, for an ingress sharing the
    process with the pools (``walletd up``).
    """
    settings = settings.for_role(role)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if role == "ingress":
        pool = max(5, settings.http_threads + 2)
    else:
        consumed = queues.ALL if queue_names is None else tuple(queue_names)
        pool = max(5, sum(threads or settings.threads_for(q) for q in consumed) + 2)
    name = f"walletd-{role}" + (f"[{label}]" if label else "")
    engine = make_engine(settings.effective_database_url, pool_size=pool, application_name=name)
    session_factory = make_session_factory(engine)
    quotas.install(session_factory)  # resource limits checked before every flush
    if broker is None:
        # imported here: the supervisor picks prometheus-client's multiprocess mode first
        from infra.observability.messages import Observe

        broker = build_broker(settings.broker_url, middleware=[Observe()])
    # ``walletd up`` gives its ingress the pools' settlements: one process, one announcement
    settlements = settlements if settlements is not None else Settlements()
    app_proofs = _app_proofs(role)
    services = Services(
        settings=settings,
        role=role,
        engine=engine,
        session_factory=session_factory,
        read_session_factory=make_read_session_factory(engine),
        broker=broker,
        # the settled announcement runs last, once every other listener has seen the change
        activity_listeners=(*ACTIVITY_LISTENERS,
                            *((app_proofs.on_activity_change,) if app_proofs else ()),
                            settlements.on_activity_change),
        settlements=settlements,
        stamps=stamps(),
    )
    if role in KEY_HOLDING_ROLES:
        # The seal first: every key below lives in the keyring only it opens (docs/CUSTODY.md).
        seal = open_seal(settings, role, label)
        custody = custody_of_seal(seal)
        custody.session_factory = session_factory
        services = WorkerServices(
            **{f.name: getattr(services, f.name) for f in dataclasses.fields(Services)},
            custody=custody, service_keys=ServiceKeys(custody),
            webhook_keys=SealedKeyRing(seal), log_keys=LogKeys(custody), seal=seal,
            email_events=EventWriter(services.uow))
        # What needs a key is made once the process is unsealed (now, or when an operator
        # unseals it); sealing drops what it holds.
        seal.listeners.append(partial(_on_seal_change, services, app_proofs))
        _on_seal_change(services, app_proofs, seal.sealed)
        # New webhook deliveries go to the notifier right after their commit.
        outbox.set_dispatcher(_webhook_dispatcher(broker))
        # Auth proxy configuration changes are published over the rate limiter's Redis.
        invalidation.configure(settings.effective_rate_limit_url)
    announcer = services.announcer if role != "cli" else None
    if announcer is not None:
        # forget organizations without endpoints when endpoints change (PostgreSQL NOTIFY;
        # SQLite: counted by triggers, infra.db.announced)
        outbox.ENDPOINT_ABSENCE.watch(announcer)
        # the API keys behind stamps and the keys signWith names, remembered per process and
        # forgotten on the database's announcements (infra.db.announced)
        principal.KEYS.attach(announcer)
        store.TARGETS.attach(announcer)
        # the access controls, the same way (infra.access.changes)
        ip_allowlist.CACHE.attach(announcer)
        mfa.CACHE.attach(announcer)
        session_profiles.PROFILES.attach(announcer)
    if role in ("ingress", "embedded"):
        _ = services.waiter  # subscribed from the start, not at the first request
    return services


def _webhook_dispatcher(broker: dramatiq.Broker) -> Callable[[list[str]], None]:
    def dispatch(ids: list[str]) -> None:
        for delivery_id in ids:
            actor_messages.send_deliver_webhook(broker, delivery_id)
    return dispatch


def _on_seal_change(services: WorkerServices, app_proofs: boots.AppProofs | None,
                    sealed: bool) -> None:
    """Unsealed: the bundle signer, the service keys, the audit log key and this boot's
    record (once), the webhook ring's public keys."""
    if sealed:
        services.custody.forget_signer()
        return
    try:
        services.custody.signer()
    except Exception:  # tables may not exist yet (before ``walletd migrate``)
        log.info("bundle signer not initialised yet; will be created on first use")
    _ensure_service_keys(services)
    _audit_log_key(services, app_proofs)
    _publish_webhook_keys(services)


def _ensure_service_keys(services: WorkerServices) -> None:
    """Create missing service keys (login, verification token, encryption)."""
    try:
        with services.session_factory() as session:
            services.service_keys.ensure_all(session)
    except Exception:  # tables may not exist yet (before ``walletd migrate``)
        log.info("service login keys not initialised yet; created on first use")


def _app_proofs(role: Role) -> boots.AppProofs | None:
    """Worker processes sign app proofs with a key of their own boot (docs/AUDIT.md)."""
    return boots.AppProofs(boots.BootKey.generate()) if role in ("worker", "embedded") else None


def _audit_log_key(services: WorkerServices, app_proofs: boots.AppProofs | None) -> None:
    """Create the audit log key on first start; record this boot (signed, logged)."""
    try:
        with services.session_factory() as session:
            key = services.log_keys.get(session)
    except Exception:  # tables may not exist yet (before ``walletd migrate``)
        log.info("audit log key not initialised yet; created on first use")
        return
    if app_proofs is None or app_proofs.recorded:
        return
    try:
        with services.uow() as uow:
            app_proofs.record(uow.session, key, services.settings, services.role)
            uow.commit()
    except Exception:  # no record, no proofs: a proof's key must have a boot record
        log.exception("could not record this process's boot; it makes no app proofs")
        return
    app_proofs.recorded = True


def _publish_webhook_keys(services: WorkerServices) -> None:
    """Publish the webhook signing ring's public keys for the JWKS endpoint."""
    try:
        with services.uow() as uow:
            keystore.publish(uow.session, services.webhook_keys.ring())
            uow.commit()
    except SQLAlchemyError:
        log.warning("webhook signing keys not published (database not migrated yet?)")
