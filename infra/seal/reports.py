"""Worker processes report their seal to the database (the console's "seal state").

The ingress holds no seal (and no key), so it cannot say whether the service is sealed; the
processes that hold one write a ``SealReport`` row (``infra.db.models.seal``) every
``REPORT_INTERVAL_S`` seconds and at once when they seal or unseal, and ``get_seal_status``
reads the rows reported within ``FRESH_S``. A row holds no secret and no host name: a random
process id, the process's role, sealed or not, the seal type, the root key version, the
share threshold and the unseal progress. A process that stops deletes its row.
"""

from __future__ import annotations

import logging
import secrets
import threading
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import CursorResult, delete, insert, update
from sqlalchemy.exc import SQLAlchemyError

from infra.clock import now
from infra.db.models.seal import REPORT_INTERVAL_S, SealReport
from infra.seal.state import SealState

if TYPE_CHECKING:
    from infra.services import Services

log = logging.getLogger(__name__)

def _values(seal: SealState) -> dict[str, Any]:
    status = seal.status()
    return {"role": status["process"][:128], "sealed": status["sealed"],
            "seal_type": status["type"][:16], "root_version": status["version"],
            "threshold": status["threshold"], "progress": status["progress"],
            "reported_at": now()}


def start(services: Services, seal: SealState, stop: threading.Event) -> threading.Thread:
    """Report ``seal`` until ``stop`` is set (then delete the row), in a daemon thread."""
    process_id = secrets.token_hex(16)
    changed = threading.Event()
    seal.listeners.append(lambda sealed: changed.set())

    def report() -> None:
        values = _values(seal)
        with services.uow() as uow:
            # An UPDATE's result is a cursor result: it has the row count.
            done = cast("CursorResult[Any]", uow.session.execute(
                update(SealReport).where(SealReport.process_id == process_id).values(**values)))
            if not done.rowcount:
                uow.session.execute(insert(SealReport).values(process_id=process_id, **values))
            uow.commit()

    def loop() -> None:
        while not stop.is_set():
            try:
                report()
            except SQLAlchemyError as err:
                log.debug("seal report not written (%s); trying again", type(err).__name__)
            changed.wait(REPORT_INTERVAL_S)
            changed.clear()
        try:
            with services.uow() as uow:
                uow.session.execute(delete(SealReport).where(SealReport.process_id == process_id))
                uow.commit()
        except SQLAlchemyError:
            pass  # the row goes stale and is no longer read

    def on_stop() -> None:
        stop.wait()
        changed.set()  # wake the loop to delete the row

    threading.Thread(target=on_stop, name="walletd-seal-report-stop", daemon=True).start()
    thread = threading.Thread(target=loop, name="walletd-seal-report", daemon=True)
    thread.start()
    return thread
