"""The webhook outbox: delivery rows written in the activity's own transaction.

:func:`on_activity_change` is an activity listener (``infra.db.changes``). On every activity
creation and status change it finds the active endpoints subscribed to ``ACTIVITY_UPDATES`` in
the activity's organization and every ancestor, renders the full activity object once (as the
change leaves it), and answers with one ``webhook_deliveries`` row per endpoint (``PENDING``,
due now), which the activity store inserts right after the change. The rows commit or
roll back with the change, so a crash can neither lose an event nor invent one; the event id is
derived from (activity id, status, activity version), and ``(event_id, endpoint_id)`` is
unique, so writing the same change twice adds nothing while every status change is an event.

Dispatch: in processes that have a broker at hand (workers, embedded), :func:`set_dispatcher`
registers a sender and the new rows' ids are sent to the notifier right after the transaction
commits (``uow.after_commit``), marked as dispatched so the relay leaves them
alone. Elsewhere (the ingress), or if that send is lost, the notifier's relay picks the rows
up from the table; nothing depends on the send.

The legacy ``FEATURE_NAME_WEBHOOK`` organization feature is mirrored as an endpoint row
(``source = "feature"``) in the transaction of the activity that sets or removes it, and
follows the feature's value; ordinary events then read endpoints only.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Final, cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.orm import Session

from infra.clock import new_id, now
from infra.db.activity_rows import ActivityRow
from infra.db.announced import ENDPOINTS_CHANNEL, Announcer
from infra.db.changes import Change, Effects, Insert
from infra.db.models.organizations import OrganizationFeature
from infra.db.models.webhooks import SOURCE_FEATURE, WebhookDelivery, WebhookEndpoint
from infra.db.unit_of_work import UnitOfWork
from infra.identity.ancestry import organization_chain
from infra.pipeline import store
from infra.pipeline.lifecycle import COMPLETED
from infra.views.activities import render_change
from infra.webhooks.endpoints import subscribed
from infra.webhooks.payloads import ACTIVITY_UPDATES, WebhookEvent, activity_update_event
from infra.webhooks.schedule import DeliveryState

FEATURE_WEBHOOK = "FEATURE_NAME_WEBHOOK"
#: Activities that change organization features (the feature-backed endpoint follows them).
FEATURE_ACTIVITY_TYPES = frozenset({"ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
                                    "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE"})
#: Activities that write ``webhook_endpoints`` through the API.
ENDPOINT_ACTIVITY_TYPES: Final = frozenset({"ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
                                            "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT",
                                            "ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT"})
FEATURE_ENDPOINT_NAME = "FEATURE_NAME_WEBHOOK"
log = logging.getLogger(__name__)

#: ``session.info`` key collecting the delivery ids a transaction created.
#: How long a row dispatched at commit is left to that message before the relay re-sends it.
DISPATCH_GRACE = timedelta(seconds=60)
_dispatcher: Callable[[list[str]], None] | None = None

_FEATURE_NAMESPACE = uuid.UUID("0b6c2f4e-1d8a-5e57-9c33-6a4f2e8d7b10")


def feature_endpoint_id(organization_id: str) -> str:
    """The fixed id of an organization's feature-backed endpoint.

    Two transactions mirroring the feature at once collide on the primary key instead of
    creating two endpoints (the loser's transaction is retried and finds the row).
    """
    return str(uuid.uuid5(_FEATURE_NAMESPACE, organization_id))


def sync_feature_endpoints(session: Session, organization_ids: list[str]) -> None:
    """Make the feature-backed endpoint rows of these organizations match their feature.

    Call it when the webhook feature was set or removed. A set feature (re)activates its
    endpoint with that URL, whatever happened to it before: removed and set again, or
    disabled for failing (the organization cannot re-enable it otherwise, it is not an API
    endpoint), starting afresh. A removed feature deactivates it.
    """
    features = {
        f.organization_id: f.value
        for f in session.scalars(
            select(OrganizationFeature).where(
                OrganizationFeature.organization_id.in_(organization_ids),
                OrganizationFeature.name == FEATURE_WEBHOOK,
            )
        )
    }
    mirrored = {
        e.organization_id: e
        for e in session.scalars(
            select(WebhookEndpoint).where(
                WebhookEndpoint.organization_id.in_(organization_ids),
                WebhookEndpoint.source == SOURCE_FEATURE,
            )
        )
    }
    for org_id in organization_ids:
        url = (features.get(org_id) or "").strip()
        endpoint = mirrored.get(org_id)
        if url and endpoint is None:
            session.add(
                WebhookEndpoint(
                    id=feature_endpoint_id(org_id),
                    organization_id=org_id,
                    url=url,
                    name=FEATURE_ENDPOINT_NAME,
                    is_active=True,
                    subscriptions=[{"eventType": ACTIVITY_UPDATES, "isActive": True}],
                    source=SOURCE_FEATURE,
                )
            )
        elif endpoint is not None and url:
            endpoint.url = url
            endpoint.is_active = True
            endpoint.failing_since = None
            endpoint.disabled_at = None
            endpoint.disabled_reason = None
            endpoint.version += 1
        elif endpoint is not None and endpoint.is_active:
            endpoint.is_active = False
            endpoint.version += 1
    session.flush()


def changes_webhook_feature(activity: ActivityRow) -> bool:
    """Whether ``activity`` sets or removes ``FEATURE_NAME_WEBHOOK`` (not another feature)."""
    if activity.type not in FEATURE_ACTIVITY_TYPES:
        return False
    return any(
        isinstance(intent, dict) and intent.get("name") == FEATURE_WEBHOOK
        for intent in (activity.intent or {}).values()
    )


#: Built once: this runs in every activity's transaction, at every status change.
_ACTIVE_ENDPOINTS: Final = (
    select(WebhookEndpoint)
    .where(WebhookEndpoint.organization_id.in_(bindparam("chain", expanding=True)),
           WebhookEndpoint.is_active.is_(True))
    .order_by(WebhookEndpoint.created_at)
)


class EndpointAbsence:
    """Organizations whose whole chain has no active endpoint, known without a read.

    Most organizations have no endpoint, and every activity change would otherwise read
    that again. The knowledge is kept only while PostgreSQL's ``walletd_endpoints_changed``
    notifications arrive (any write to ``webhook_endpoints`` sends one, by trigger), and is
    dropped whole at each of them and whenever the listener reconnects; on SQLite, while
    the counted changes of ``webhook_endpoints`` are read before each answer
    (``infra.db.announced.CountedChanges``). A generation number keeps a read that raced a
    notification from being remembered. Without either (the CLI), nothing is remembered
    and every change reads its endpoints.
    """

    _MAX = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._absent: set[str] = set()
        self._generation = 0
        self._listener: Announcer | None = None

    def watch(self, listener: Announcer) -> None:
        """Remember absences while ``listener`` delivers endpoint notifications."""
        listener.subscribe(ENDPOINTS_CHANNEL, lambda _org: self.forget(), self.forget)
        self._listener = listener

    def forget(self) -> None:
        with self._lock:
            self._absent.clear()
            self._generation += 1

    def known_absent(self, organization_id: str) -> bool:
        if self._listener is None:
            return False
        self._listener.refresh()
        return self._live() and organization_id in self._absent

    def generation(self) -> int:
        if self._listener is not None:
            self._listener.refresh()
        return self._generation

    def note_absent(self, organization_id: str, generation: int) -> None:
        if not self._live():
            return
        with self._lock:
            if generation == self._generation and len(self._absent) < self._MAX:
                self._absent.add(organization_id)

    def _live(self) -> bool:
        return self._listener is not None and self._listener.connected.is_set()


ENDPOINT_ABSENCE: Final = EndpointAbsence()


def endpoints_for(session: Session, organization_id: str, event_type: str, *,
                  trust_absence: bool = True) -> list[WebhookEndpoint]:
    """Active endpoints of the organization and its ancestors subscribed to ``event_type``
    (read, not taken from :data:`ENDPOINT_ABSENCE`, when ``trust_absence`` is false)."""
    if trust_absence and ENDPOINT_ABSENCE.known_absent(organization_id):
        return []
    generation = ENDPOINT_ABSENCE.generation()
    chain = organization_chain(session, organization_id) or [organization_id]
    candidates = session.scalars(_ACTIVE_ENDPOINTS, {"chain": chain}).all()
    if not candidates:
        ENDPOINT_ABSENCE.note_absent(organization_id, generation)
    return [e for e in candidates if subscribed(e, event_type)]


def enqueue_event(
    session: Session,
    event: WebhookEvent,
    endpoints: list[WebhookEndpoint],
    *,
    activity_id: str | None = None,
) -> list[str]:
    """Insert one ``PENDING`` delivery per endpoint not already holding this event."""
    rows = delivery_rows(session, event, endpoints, activity_id=activity_id)
    for values in rows:
        session.add(WebhookDelivery(**values))
    session.flush()
    return [values["id"] for values in rows]


_DELIVERIES: Final = cast(Table, WebhookDelivery.__table__)


def delivery_rows(session: Session, event: WebhookEvent, endpoints: list[WebhookEndpoint], *,
                  activity_id: str | None = None) -> list[dict[str, Any]]:
    """The ``PENDING`` delivery rows of ``event``, one per endpoint not already holding it."""
    if not endpoints:
        return []
    existing = set(
        session.scalars(select(WebhookDelivery.endpoint_id).where(WebhookDelivery.event_id == event.event_id))
    )
    due = now()
    body = event.body.decode("utf-8")
    return [{
        "id": new_id(),
        "event_id": event.event_id,
        "event_type": event.event_type,
        "endpoint_id": endpoint.id,
        "organization_id": endpoint.organization_id,
        "subject_organization_id": event.organization_id,
        "activity_id": activity_id,
        "body": body,
        "status": DeliveryState.PENDING.value,
        "attempts": 0,
        "schedule_attempts": 0,
        "next_attempt_at": due,
        "dispatched_until": due + DISPATCH_GRACE if _dispatcher is not None else None,
    } for endpoint in endpoints if endpoint.id not in existing]


def enqueue_and_dispatch(uow: UnitOfWork, event: WebhookEvent,
                         endpoints: list[WebhookEndpoint]) -> None:
    """:func:`enqueue_event` in ``uow``'s transaction, handed to the broker once it commits."""
    ids = enqueue_event(uow.session, event, endpoints)
    if ids and _dispatcher is not None:
        uow.after_commit(lambda: _dispatch(ids))


def set_dispatcher(dispatcher: Callable[[list[str]], None] | None) -> None:
    """Send new delivery ids with ``dispatcher`` after each commit (``None``: leave it to the
    relay)."""
    global _dispatcher
    _dispatcher = dispatcher


def _dispatch(ids: list[str]) -> None:
    if _dispatcher is None:
        return
    try:
        _dispatcher(ids)
    except Exception:  # the relay re-sends once the grace period is over
        log.exception("webhook dispatch after commit failed; the relay will send")


def on_activity_change(uow: UnitOfWork, change: Change) -> Effects | None:
    """Activity status listener: the ``ACTIVITY_UPDATES`` outbox rows of this change, which the
    store writes with it (handed to the broker once they committed, where a dispatcher is
    set)."""
    activity, previous = change.after, change.previous
    if previous is not None and previous == activity.status:
        return None
    feature_change = activity.status == COMPLETED and changes_webhook_feature(activity)
    # An activity that writes endpoints changes them in this very transaction: an absence
    # remembered from before it (forgotten only once it commits) must not hide them.
    rewrites = feature_change or (activity.status == COMPLETED
                                  and activity.type in ENDPOINT_ACTIVITY_TYPES)
    if not rewrites and ENDPOINT_ABSENCE.known_absent(activity.organization_id):
        return None  # nothing to do for an organization known to have no endpoint: no read
    session = uow.session
    if feature_change:
        # The feature changed in this transaction: mirror it before choosing endpoints.
        sync_feature_endpoints(session, [activity.organization_id])
    endpoints = endpoints_for(session, activity.organization_id, ACTIVITY_UPDATES,
                              trust_absence=not rewrites)
    if not endpoints:
        return None
    votes = change.votes if change.votes is not None else store.votes_of(session, activity.id)
    event = activity_update_event(render_change(session, activity, votes),
                                  sequence=activity.version)
    rows = delivery_rows(session, event, endpoints, activity_id=activity.id)
    if not rows:
        return None
    ids = [values["id"] for values in rows]
    if _dispatcher is not None:
        uow.after_commit(lambda: _dispatch(ids))
    return Effects(inserts=tuple(Insert(_DELIVERIES, values) for values in rows))
