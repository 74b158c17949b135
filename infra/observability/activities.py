"""Following activities: context ids, a log line and metrics for every committed change.

A lifecycle listener (``infra.pipeline.lifecycle.LISTENERS``) binds the activity and
organization ids to the current context (so every later log line of this request or message
carries them) and remembers the change in the transaction's session; when the transaction
commits, each change is counted (``walletd_activities_total``, and the submit-to-settle
latency when it settles) and logged once on ``walletd.activity``. A rolled-back change is
neither counted nor logged.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from sqlalchemy import event
from sqlalchemy.orm import Session

from infra.clock import as_utc, now
from infra.db.models.activities import Activity
from infra.observability import context, metrics
from infra.pipeline import lifecycle

log = logging.getLogger("walletd.activity")

#: ``session.info`` key of the changes a transaction made, applied when it commits.
_CHANGES: Final = "walletd.observability.changes"


def _record(session: Session, activity: Activity, previous: str | None) -> None:
    context.ACTIVITY_ID.set(activity.id)
    context.ORGANIZATION_ID.set(activity.organization_id)
    settled = None
    if activity.status in lifecycle.SETTLED and activity.created_at is not None:
        settled = max(0.0, (now() - as_utc(activity.created_at)).total_seconds())
    session.info.setdefault(_CHANGES, []).append(
        (activity.id, activity.organization_id, activity.type, previous, activity.status, settled))


def _committed(session: Session) -> None:
    for activity_id, organization_id, activity_type, previous, status, settled in session.info.pop(
            _CHANGES, ()):
        metrics.ACTIVITIES.labels(activity_type, status).inc()
        if settled is not None:
            metrics.SETTLE_SECONDS.labels(activity_type, status).observe(settled)
        with context.bound(activity_id=activity_id, organization_id=organization_id):
            log.info("%s %s -> %s", activity_type, previous or "new", status)


def _rolled_back(session: Session, *_: Any) -> None:
    session.info.pop(_CHANGES, None)


lifecycle.LISTENERS.append(_record)
event.listen(Session, "after_commit", _committed)
event.listen(Session, "after_soft_rollback", _rolled_back)
