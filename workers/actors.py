"""Executor actors, one per pool: ids in, ``infra.pipeline.execute.run_activity`` does the work."""

from __future__ import annotations

import dramatiq

from infra.messaging import actor_messages
from infra.pipeline.execute import MAX_RETRIES, retry_when, run_activity
from infra.services import Services


def declare(services: Services) -> list[dramatiq.Actor[[str], None]]:
    """Declare the signing and accounts executors on ``services.broker``."""
    actors: list[dramatiq.Actor[[str], None]] = []
    for name in (actor_messages.EXECUTE_SIGNING_ACTIVITY, actor_messages.EXECUTE_ACCOUNT_ACTIVITY):

        def _execute(activity_id: str) -> None:
            run_activity(services, activity_id)

        _execute.__name__ = name
        actors.append(dramatiq.actor(
            broker=services.broker,
            actor_name=name,
            queue_name=actor_messages.ACTORS[name],
            # Business errors never reach the broker (recorded as FAILED); only database
            # connectivity errors are retried. Signing is never re-run after completion
            # because run_activity is status-guarded.
            max_retries=MAX_RETRIES, min_backoff=100, max_backoff=30_000, time_limit=120_000,
            retry_when=retry_when,
        )(_execute))
    return actors
