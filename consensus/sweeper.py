"""Re-sending work whose broker message may have been lost.

The ingress commits an activity and then sends its execute message; a crash in between (or
a lost broker queue) leaves it PENDING with no message. The sweeper re-sends the execute
message to the activity's pool for activities PENDING longer than a grace period since they
were stored or last changed (a vote that sends an activity back to PENDING touches
``updated_at``), so a long but healthy backlog is not flooded with duplicates. Duplicates
are harmless anyway: every executor is status-guarded.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from sqlalchemy import select

from infra.activities import registry
from infra.clock import now
from infra.db.models.activities import Activity
from infra.messaging import actor_messages
from infra.observability import metrics
from infra.pipeline import lifecycle
from infra.services import Services

log = logging.getLogger(__name__)


def sweep_once(services: Services, grace: timedelta) -> int:
    """Re-send the execute message of activities PENDING for longer than ``grace``."""
    cutoff = now() - grace
    with services.read_session_factory() as session:
        rows = session.execute(select(Activity.id, Activity.type).where(
            Activity.status == lifecycle.PENDING, Activity.updated_at < cutoff).limit(500)).all()
    specs = registry().by_type
    sent = 0
    for activity_id, activity_type in rows:
        found = specs.get(activity_type)
        if found is None:  # a type this deployment no longer serves: logged, not re-sent
            log.error("activity %s has unknown type %s; leaving it", activity_id, activity_type)
            continue
        actor_messages.send_execute_activity(services.broker, activity_id, found[0].pool)
        sent += 1
    metrics.SWEEPER_RESENDS.inc(sent)
    if sent:
        log.info("sweeper re-sent %d pending activities", sent)
    return sent


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
