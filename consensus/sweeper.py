"""Re-sending work whose broker message may have been lost.

The ingress commits an activity and then sends ``evaluate_activity``; a crash in between
(or a lost broker queue) leaves it PENDING with no message. The sweeper re-sends for
activities PENDING longer than a grace period since their last hand-off (consensus touches
``updated_at`` when it hands an activity to its pool), so a long but healthy backlog is not
flooded with duplicates. Duplicates are harmless anyway (every actor is status-guarded).
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from sqlalchemy import select

from infra.bootstrap import Services
from infra.clock import now
from infra.db.models.activities import Activity
from infra.messaging import contracts
from infra.observability import metrics
from infra.pipeline import lifecycle

log = logging.getLogger(__name__)


def sweep_once(services: Services, grace: timedelta) -> int:
    """Re-send ``evaluate_activity`` for activities PENDING for longer than ``grace``."""
    cutoff = now() - grace
    with services.session_factory() as session:
        ids = session.scalars(select(Activity.id).where(
            Activity.status == lifecycle.PENDING, Activity.updated_at < cutoff).limit(500)).all()
    for activity_id in ids:
        contracts.send_evaluate_activity(services.broker, activity_id)
    metrics.SWEEPER_RESENDS.inc(len(ids))
    if ids:
        log.info("sweeper re-sent %d pending activities", len(ids))
    return len(ids)


def start(services: Services, stop: threading.Event) -> threading.Thread:
    """Sweep every ``sweep_interval_s`` in a daemon thread until ``stop`` is set."""
    interval = services.settings.sweep_interval_s
    grace = timedelta(seconds=services.settings.sweep_grace_s)

    def loop() -> None:
        while not stop.wait(interval):
            try:
                sweep_once(services, grace)
            except Exception:
                log.exception("sweep failed; retrying next interval")

    thread = threading.Thread(target=loop, name="walletd-sweeper", daemon=True)
    thread.start()
    return thread
