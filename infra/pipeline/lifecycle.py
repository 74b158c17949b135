"""The activity state machine: statuses, guarded transitions and change listeners.

Every status change goes through :func:`transition` (or :func:`record_created` for the
first row), inside the caller's unit of work. The unit of work's listeners (the ordered list
``infra.bootstrap`` wires) run in that same transaction, so an outbox row they write commits or
rolls back with the change; whatever they do after the commit they register with
``uow.after_commit``.

Settling is announced twice, each only once the change committed: on PostgreSQL by the
database itself (a trigger sends ``NOTIFY walletd_activity_settled`` with the id; migration
``0007_pipeline``), to every process; and in process, by :class:`Settlements` (one of the
listeners) to the subscribed waiters, so a request waiting in the process that settled the
activity wakes at once on any database.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Final

from sqlalchemy import ColumnElement, Update, bindparam, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from infra.audit import leaves as audit_leaves
from infra.clock import now
from infra.db.models.activities import Activity
from infra.db.unit_of_work import ActivityListener, UnitOfWork
from infra.pipeline import rows

CREATED: Final = "ACTIVITY_STATUS_CREATED"
PENDING: Final = "ACTIVITY_STATUS_PENDING"
COMPLETED: Final = "ACTIVITY_STATUS_COMPLETED"
FAILED: Final = "ACTIVITY_STATUS_FAILED"
CONSENSUS_NEEDED: Final = "ACTIVITY_STATUS_CONSENSUS_NEEDED"
REJECTED: Final = "ACTIVITY_STATUS_REJECTED"
#: Waiting for the MFA steps of its proposer (``infra.pipeline.mfa``).
AUTHENTICATORS_NEEDED: Final = "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED"

#: Statuses after which nothing changes any more.
TERMINAL: Final = frozenset({COMPLETED, FAILED, REJECTED})
#: Statuses a waiting submit may answer with (the client stops polling on these).
SETTLED: Final = TERMINAL | {CONSENSUS_NEEDED, AUTHENTICATORS_NEEDED}
#: PostgreSQL NOTIFY channel carrying the id of an activity that just settled.
SETTLED_CHANNEL: Final = "walletd_activity_settled"
#: PostgreSQL NOTIFY channel carrying ``<id> <v1Activity JSON>`` of an activity that settled
#: where its rendering is known (``settle(answer=...)``), so the waiting request needs no read.
#: Only COMPLETED activities that are not votes travel so (``infra.pipeline.execute``): the
#: request answers with the text as it came.
ANSWER_CHANNEL: Final = "walletd_activity_answer"
#: Called as ``listener(uow, activity, previous_status)`` after every change.
Listener = ActivityListener


class Settlements:
    """In-process announcement of settled activities, after the commit that settled them.

    :meth:`on_activity_change` is an activity status listener (wired last in
    ``infra.bootstrap``); the process's waiter subscribes with :meth:`subscribe`, and with
    :meth:`subscribe_answers` for the renderings :func:`settle` holds (``ANSWER_CHANNEL``'s
    payloads), which are offered before the ids are announced.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: tuple[Callable[[list[str]], None], ...] = ()
        self._answer_subscribers: tuple[Callable[[str], None], ...] = ()
        self._held: weakref.WeakKeyDictionary[UnitOfWork, list[str]] = weakref.WeakKeyDictionary()

    def subscribe(self, announce: Callable[[list[str]], None]) -> None:
        """Call ``announce(activity_ids)`` after each commit that settled them."""
        with self._lock:
            self._subscribers = (*self._subscribers, announce)

    def unsubscribe(self, announce: Callable[[list[str]], None]) -> None:
        """Stop calling ``announce``."""
        with self._lock:
            self._subscribers = tuple(s for s in self._subscribers if s != announce)

    def subscribe_answers(self, offer: Callable[[str], None]) -> None:
        """Call ``offer(payload)`` for each rendering held by a committed transaction."""
        with self._lock:
            self._answer_subscribers = (*self._answer_subscribers, offer)

    def unsubscribe_answers(self, offer: Callable[[str], None]) -> None:
        """Stop calling ``offer``."""
        with self._lock:
            self._answer_subscribers = tuple(s for s in self._answer_subscribers if s != offer)

    def hold(self, uow: UnitOfWork, payload: str) -> None:
        """Keep a settled activity's rendering until ``uow`` commits (dropped otherwise)."""
        if self._answer_subscribers:
            with self._lock:
                self._held.setdefault(uow, []).append(payload)

    def on_activity_change(self, uow: UnitOfWork, activity: Activity, previous: str | None) -> None:
        """Listener: announce ``activity`` once the transaction settling it committed."""
        if activity.status in SETTLED and self._subscribers:
            ids = [activity.id]
            uow.after_commit(lambda: self._announce(ids, uow))

    def _announce(self, ids: list[str], uow: UnitOfWork) -> None:
        with self._lock:
            held = self._held.pop(uow, [])
        for offer in self._answer_subscribers:
            for payload in held:
                offer(payload)
        for announce in self._subscribers:
            announce(ids)


def _notify(uow: UnitOfWork, activity: Activity, previous: str | None) -> None:
    for listener in uow.listeners:
        listener(uow, activity, previous)


def record_created(uow: UnitOfWork, activity: Activity) -> None:
    """Announce a newly inserted activity (already added to ``uow.session``)."""
    _notify(uow, activity, None)


def claim_statement(*also: ColumnElement[Any]) -> Update:
    """The claim's conditional UPDATE, returning the activity and then ``also``.

    Built once at import (statement construction costs more than its execution); binds
    ``activity_id``, ``expected`` and ``now``; ``also`` may use ``bindparam("activity_id")``.
    """
    return (
        update(Activity)
        .where(Activity.id == bindparam("activity_id"), Activity.status == bindparam("expected"))
        .values(version=Activity.version + 1, updated_at=bindparam("now"))
        .returning(Activity, *also)
        .execution_options(synchronize_session=False, populate_existing=True)
    )


_CLAIM: Final = claim_statement()


def claim(session: Session, activity_id: str, expected: str) -> Activity | None:
    """Lock ``activity_id`` for this transaction if its status is ``expected``.

    The conditional UPDATE takes the row lock on PostgreSQL and the write lock on SQLite,
    so two workers handling the same (redelivered) message serialize here and the second
    sees the new status and backs off. It also stamps ``updated_at`` (the sweeper measures
    its grace from the last claim). Returns the activity, or ``None`` if it is not in
    ``expected`` any more.
    """
    row = claim_with(session, _CLAIM, activity_id, expected)
    return row[0] if row is not None else None


def claim_with(session: Session, statement: Update, activity_id: str,
               expected: str) -> tuple[Any, ...] | None:
    """:func:`claim` with a :func:`claim_statement` that also returns what the caller must
    know about the activity at that moment (e.g. whether it was allowed before), in the
    same round trip. The row's first element is the activity."""
    params = {"activity_id": activity_id, "expected": expected, "now": now()}
    row = session.execute(statement, params).one_or_none()
    return tuple(row) if row is not None else None


def transition(
    uow: UnitOfWork,
    activity: Activity,
    status: str,
    *,
    result: dict[str, Any] | None = None,
    failure: dict[str, Any] | None = None,
) -> None:
    """Move a claimed activity to ``status``, recording its result or failure.

    Every change bumps ``version``, so ``(status, version)`` names one transition: entering a
    status a second time is told apart from the first (webhook event ids), while a retried
    transaction, starting from the same committed version, names the same one.
    """
    session = uow.session
    previous = activity.status
    activity.status = status
    activity.version = activity.version + 1
    activity.updated_at = now()
    if result is not None:
        activity.result = result
    if failure is not None:
        activity.failure = failure
    session.flush()
    _notify(uow, activity, previous)


def settle(
    uow: UnitOfWork,
    activity: Activity,
    status: str,
    *,
    result: dict[str, Any] | None = None,
    failure: dict[str, Any] | None = None,
    evaluation: dict[str, Any] | None = None,
    answer: Callable[[Activity], str | None] | None = None,
) -> None:
    """:func:`transition` for the hot path: one Core statement, no flush.

    Moves an activity claimed in this transaction to ``status`` and tells the listeners
    (which see ``activity`` changed, as with :func:`transition`), then writes the new status,
    version, result and failure with, in the same statement on PostgreSQL, the policy
    ``evaluation`` that decided it, the audit-log leaf its listeners staged and the
    ``answer`` (the settled activity's rendering, ``ANSWER_CHANNEL``; in process, held by
    :class:`Settlements` until the commit) that spares the waiting ingress its read. A change
    a listener makes to ``activity`` (redaction) is written at commit by the ORM, and seen by
    ``answer``.
    """
    session = uow.session
    previous = activity.status
    values = {
        "status": status,
        "version": activity.version + 1,
        "updated_at": now(),
        "result": result if result is not None else activity.result,
        "failure": failure if failure is not None else activity.failure,
    }
    for key, value in values.items():
        set_committed_value(activity, key, value)
    with audit_leaves.held(session) as leaves:
        _notify(uow, activity, previous)
    payload = answer(activity) if answer is not None else None
    rows.settle(session, activity.id, values, evaluation,
                (ANSWER_CHANNEL, payload) if payload is not None else None, leaves)
    if payload is not None:
        for listener in uow.listeners:
            owner = getattr(listener, "__self__", None)
            if isinstance(owner, Settlements):
                owner.hold(uow, payload)
