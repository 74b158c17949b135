"""Following activities: context ids, a log line and metrics for every committed change.

:func:`on_activity_change`, an activity status listener (wired in ``infra.bootstrap``), binds
the activity and organization ids to the current context (so every later log line of this
request or message carries them) and, once the unit of work commits, counts the change
(``walletd_activities_total``, and the submit-to-settle latency when it settles) and logs it
once on ``walletd.activity``. A rolled-back change is neither counted nor logged.
"""

from __future__ import annotations

import logging

from infra.clock import as_utc, now
from infra.db.changes import Change
from infra.db.unit_of_work import UnitOfWork
from infra.observability import context
from infra.pipeline import lifecycle

log = logging.getLogger("walletd.activity")

def on_activity_change(uow: UnitOfWork, change: Change) -> None:
    """Activity status listener: bind the ids now; count and log the change after commit."""
    activity, previous = change.after, change.previous
    context.ACTIVITY_ID.set(activity.id)
    context.ORGANIZATION_ID.set(activity.organization_id)
    settled = None
    if activity.status in lifecycle.SETTLED and activity.created_at is not None:
        settled = max(0.0, (now() - as_utc(activity.created_at)).total_seconds())
    moved = (activity.id, activity.organization_id, activity.type, previous, activity.status)
    uow.after_commit(lambda: _committed(*moved, settled))


def _committed(activity_id: str, organization_id: str, activity_type: str, previous: str | None,
               status: str, settled: float | None) -> None:
    from infra.observability import metrics  # lazily: the supervisor picks the metrics mode first

    metrics.ACTIVITIES.labels(activity_type, status).inc()
    if settled is not None:
        metrics.SETTLE_SECONDS.labels(activity_type, status).observe(settled)
    with context.bound(activity_id=activity_id, organization_id=organization_id):
        log.info("%s %s -> %s", activity_type, previous or "new", status)
