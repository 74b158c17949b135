"""The dramatiq middleware that carries the context ids across the broker and times messages.

On send, the sender's request id rides in the message's options (``walletd_request_id``);
on receipt the worker thread binds it with the message's activity id (every activity actor's
first argument) so its log lines carry both; the lifecycle listener adds the organization
once the activity is claimed. Each message is counted and timed in
:mod:`infra.observability.metrics` and logged once on ``walletd.messages`` when it is done.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import dramatiq
from dramatiq.middleware import Middleware

from infra.messaging import actor_messages
from infra.observability import context, metrics

log = logging.getLogger("walletd.messages")

REQUEST_OPTION: Final = "walletd_request_id"
#: Actors whose first argument is an activity id: all but the webhook delivery's.
ACTIVITY_ACTORS: Final = frozenset(actor_messages.ACTORS) - {actor_messages.DELIVER_WEBHOOK}

class Observe(Middleware):
    """Context ids across processes; per-message counts, durations and in-flight gauge."""

    def __init__(self) -> None:
        #: message id -> (context tokens, start time) of the messages being processed.
        self.running: dict[str, tuple[context.Tokens, float]] = {}

    def before_enqueue(self, broker: dramatiq.Broker, message: dramatiq.Message[Any],
                       delay: int | None) -> None:
        request_id = context.REQUEST_ID.get()
        if request_id and REQUEST_OPTION not in message.options:
            message.options[REQUEST_OPTION] = request_id

    def before_process_message(self, broker: dramatiq.Broker, message: Any) -> None:
        activity_id = (str(message.args[0]) if message.actor_name in ACTIVITY_ACTORS and message.args
                       else None)
        tokens = context.bind(request_id=message.options.get(REQUEST_OPTION),
                              activity_id=activity_id, organization_id=None)
        metrics.IN_PROGRESS.labels(message.queue_name, message.actor_name).inc()
        self.running[message.message_id] = (tokens, time.monotonic())

    def after_process_message(self, broker: dramatiq.Broker, message: Any, *,
                              result: Any = None, exception: BaseException | None = None) -> None:
        state = self.running.pop(message.message_id, None)
        if state is None:
            return
        tokens, started = state
        labels = (message.queue_name, message.actor_name)
        seconds = time.monotonic() - started
        outcome = "error" if exception is not None else "ok"
        metrics.IN_PROGRESS.labels(*labels).dec()
        metrics.MESSAGE_SECONDS.labels(*labels).observe(seconds)
        metrics.MESSAGES.labels(*labels, outcome).inc()
        log.info("%s %s in %.1f ms", message.actor_name, outcome, seconds * 1000)
        context.unbind(tokens)

    after_skip_message = after_process_message
