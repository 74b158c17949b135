"""Unit of work: one transaction, explicit commit, messages sent only after commit."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import TracebackType

from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger(__name__)


class UnitOfWork:
    """A transaction around a SQLAlchemy session.

    Leaving the block without :meth:`commit` rolls back. Callbacks registered with
    :meth:`after_commit` (typically broker sends) run only once the commit succeeded, so
    a message never announces a row that does not exist. If the process dies between the
    commit and the send, the sweeper re-sends (activities stuck in PENDING).
    """

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._factory = session_factory
        self._after_commit: list[Callable[[], None]] = []
        self.session: Session

    def __enter__(self) -> UnitOfWork:
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
            self.session.rollback()
        finally:
            self.session.close()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` after the next successful commit."""
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
