"""The activity state machine's statuses, and the in-process announcement of settled ones.

Every creation and status change goes through the activity store (``infra.pipeline.store``:
``accept``, ``transition``), inside the caller's unit of work. The unit of work's listeners
(the ordered list ``infra.bootstrap`` wires) are told of it in that same transaction and
answer with the effects the store writes with it (``infra.db.changes``), so an outbox row
commits or rolls back with the change; whatever they do after the commit they register with
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
from functools import partial
from typing import Final

from infra.db.changes import Change, Effects
from infra.db.unit_of_work import ActivityListener, UnitOfWork

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
#: where its rendering is known (``store.transition(answer=...)``), so the waiting request
#: needs no read.
#: Only COMPLETED activities that are not votes travel so (``infra.pipeline.execute``): the
#: request answers with the text as it came.
ANSWER_CHANNEL: Final = "walletd_activity_answer"
#: Called as ``listener(uow, change)`` on every change; returns its effects.
Listener = ActivityListener


class Settlements:
    """In-process announcement of settled activities, after the commit that settled them.

    :meth:`on_activity_change` is an activity status listener (wired last in
    ``infra.bootstrap``); the process's waiter subscribes with :meth:`subscribe`, and with
    :meth:`subscribe_answers` for the renderings a settling transition hands it
    (``ANSWER_CHANNEL``'s payloads, ``infra.pipeline.store.transition``), which are offered
    before the ids are announced.
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

    def on_activity_change(self, uow: UnitOfWork, change: Change) -> Effects | None:
        """Listener: announce the activity once the transaction settling it committed, and
        take the rendering that travels with it (held until that commit)."""
        if change.after.status not in SETTLED or not self._subscribers:
            return None
        ids = [change.after.id]
        uow.after_commit(lambda: self._announce(ids, uow))
        return Effects(on_answer=partial(self.hold, uow))

    def _announce(self, ids: list[str], uow: UnitOfWork) -> None:
        with self._lock:
            held = self._held.pop(uow, [])
        for offer in self._answer_subscribers:
            for payload in held:
                offer(payload)
        for announce in self._subscribers:
            announce(ids)
