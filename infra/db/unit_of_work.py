"""Unit of work: one transaction, explicit commit, effects announced only after commit.

This is the one after-commit mechanism: whatever must happen once a transaction's changes are
durable (a broker send, a webhook dispatch, a metric, a wake-up, a cache invalidation) is
registered with :meth:`UnitOfWork.after_commit` on the unit of work that made the change. An
activity's handler reaches it as ``ctx.uow``; an activity status listener receives it as its
first argument.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from types import TracebackType

from sqlalchemy.orm import Session, sessionmaker

from infra.db.changes import Change, Effects

log = logging.getLogger(__name__)

#: Called as ``listener(uow, change)`` on every activity creation and status change
#: (``infra.pipeline.store``), inside the transaction that makes it; returns what the store
#: writes with the change (``infra.db.changes``).
ActivityListener = Callable[["UnitOfWork", Change], "Effects | None"]


class UnitOfWork:
    """A transaction around a SQLAlchemy session.

    Leaving the block without :meth:`commit` rolls back. Callbacks registered with
    :meth:`after_commit` (typically broker sends) run only once the commit succeeded, so
    a message never announces a row that does not exist; a rollback drops them. If the
    process dies between the commit and the send, the sweeper re-sends (activities stuck in
    PENDING). With a ``write_lock`` (SQLite, ``infra.db.engine.write_lock``) the block holds
    it throughout, so the process's writers queue instead of colliding. ``listeners`` are the
    process's activity status listeners, in order (wired in ``infra.bootstrap``).
    """

    def __init__(self, session_factory: sessionmaker[Session],
                 write_lock: threading.RLock | None = None, *,
                 listeners: Sequence[ActivityListener] = ()) -> None:
        self._factory = session_factory
        self._lock = write_lock
        self._after_commit: list[Callable[[], None]] = []
        self.listeners: tuple[ActivityListener, ...] = tuple(listeners)
        self.session: Session

    def __enter__(self) -> UnitOfWork:
        if self._lock is not None:
            self._lock.acquire()
        self.session = self._factory()
        self._after_commit = []
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._after_commit = []
            self.session.rollback()
        finally:
            self.session.close()
            if self._lock is not None:
                self._lock.release()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` after the next successful commit (dropped on rollback)."""
        self._after_commit.append(callback)

    def commit(self) -> None:
        """Commit, then run the after-commit callbacks (failures are logged, not raised)."""
        self.session.commit()
        callbacks, self._after_commit = self._after_commit, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # the sweeper recovers lost sends
                log.exception("after-commit callback failed; the sweeper will retry")

    def rollback(self) -> None:
        """Discard the transaction and pending callbacks."""
        self._after_commit = []
        self.session.rollback()
