"""psycopg's pipeline mode for one transaction (PROTOTYPE, ``WALLETD_PG_PIPELINE=1``).

Inside :func:`transaction` the connection is in pipeline mode and sends its own ``BEGIN``
(psycopg would synchronise after its implicit one), queued with the first statement. A
statement executed with ``DEFERRED`` in its execution options (a write whose answer nobody
reads) stays queued until the next statement that needs its rows, or the ``COMMIT`` of
:meth:`Pipe.commit`, so they travel in one round trip. Every other statement is
synchronised right after it is sent (the engine's ``after_cursor_execute`` hook), so
SQLAlchemy reads its description and rows as usual.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import psycopg
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

#: Execution option of a statement that may stay queued in the pipeline.
DEFERRED: Final = "walletd_pipeline_deferred"
ENABLED: Final = os.environ.get("WALLETD_PG_PIPELINE", "") in ("1", "2")
#: ``2``: the ingress's accept too.
INGRESS: Final = os.environ.get("WALLETD_PG_PIPELINE", "") == "2"


def install(engine: Engine) -> None:
    """Synchronise the pipeline after every statement not marked ``DEFERRED``."""
    if ENABLED and engine.dialect.name == "postgresql":
        event.listen(engine, "after_cursor_execute", _sync)


def _sync(conn: Any, cursor: Any, statement: Any, parameters: Any, context: Any,
          executemany: bool) -> None:
    pipeline = cursor.connection._pipeline
    if pipeline is None:
        return
    if context is not None and context.execution_options.get(DEFERRED):
        return
    pipeline.sync()


class Pipe:
    """The pipeline of one transaction; :meth:`commit` sends what is queued with ``COMMIT``."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.pipeline: Any = None

    def enter(self) -> None:
        self.driver.autocommit = True
        self.pipeline = self.driver.pipeline()
        self.pipeline.__enter__()
        self.driver.execute(self.driver._get_tx_start_command())

    def commit(self) -> None:
        """Queue ``COMMIT`` and leave pipeline mode: one round trip for all that waited.

        The session's commit that follows finds nothing to do on the connection."""
        if self.pipeline is None:
            return
        pipeline, self.pipeline = self.pipeline, None
        try:
            self.driver.execute("COMMIT")
            pipeline.__exit__(None, None, None)
        except psycopg.Error as ex:
            raise DBAPIError.instance(None, None, ex, psycopg.Error) from ex
        finally:
            self._restore()

    def abandon(self, exc: BaseException | None) -> None:
        if self.pipeline is None:
            return
        pipeline, self.pipeline = self.pipeline, None
        try:
            pipeline.__exit__(type(exc) if exc else None, exc, None)
        finally:
            self.driver.rollback()
            self._restore()

    def _restore(self) -> None:
        if self.driver.pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            self.driver.autocommit = False
        else:
            self.driver.rollback()
            self.driver.autocommit = False


class _Off(Pipe):
    def __init__(self) -> None:
        super().__init__(None)

    def commit(self) -> None:
        return


@contextmanager
def transaction(session: Session, enabled: bool = True) -> Iterator[Pipe]:
    """Run ``session``'s transaction in pipeline mode (PostgreSQL, when enabled); call
    :meth:`Pipe.commit` right before the session's commit."""
    if not (ENABLED and enabled) or session.get_bind().dialect.name != "postgresql":
        yield _Off()
        return
    driver = session.connection().connection.driver_connection
    pipe = Pipe(driver)
    pipe.enter()
    try:
        yield pipe
    except BaseException as ex:
        pipe.abandon(ex)
        raise
    pipe.abandon(None)
