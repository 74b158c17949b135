"""Context ids travel with broker messages and land in JSON log lines.

A real dramatiq worker on the in-process StubBroker with the ``Observe`` middleware (as
``infra.bootstrap`` installs it): the sender's request id reaches the actor's thread with the
message's activity id, and is gone again after the message.
"""

from __future__ import annotations

import contextvars
import io
import json
import logging
import threading

import dramatiq
from dramatiq import Worker

from infra.messaging import actor_messages, queues
from infra.messaging.broker import build_broker
from infra.observability import context
from infra.observability.logs import JsonFormatter
from infra.observability.messages import Observe


def test_json_lines_carry_the_bound_ids_and_nothing_else_when_unbound() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("walletd.test.json")
    logger.addHandler(handler)
    logger.propagate = False

    def log_some() -> None:
        with context.bound(request_id="r-1", activity_id="a-1", organization_id="o-1"):
            logger.warning("inside %s", "work")
        logger.warning("outside")
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("failed")

    try:
        contextvars.Context().run(log_some)  # a fresh context, as a new thread has
    finally:
        logger.removeHandler(handler)
    inside, outside, failed = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["message"] == "inside work" and inside["level"] == "WARNING"
    assert (inside["request_id"], inside["activity_id"], inside["organization_id"]) == (
        "r-1", "a-1", "o-1")
    assert not {"request_id", "activity_id", "organization_id"} & set(outside)
    assert "ValueError: boom" in failed["exception"]


def test_request_id_from_accepts_plain_tokens_only() -> None:
    assert context.request_id_from("abc-123_X.y:z") == "abc-123_X.y:z"
    for bad in (None, "", "has space", "x" * 129, "nul\x00"):
        minted = context.request_id_from(bad)
        assert minted != bad and len(minted) == 32


def test_a_message_carries_the_senders_request_id_to_the_actor() -> None:
    broker = build_broker("memory://", middleware=[Observe()])
    seen: list[dict[str, str]] = []
    done = threading.Event()

    # An actor with an executor's name, so its first argument is the activity id.
    @dramatiq.actor(broker=broker, actor_name=actor_messages.EXECUTE_SIGNING_ACTIVITY,
                    queue_name=queues.SIGNING, max_retries=0)
    def execute(activity_id: str) -> None:
        seen.append(context.current())
        done.set()

    worker = Worker(broker, queues={queues.SIGNING}, worker_threads=1, worker_timeout=100)
    worker.start()
    try:
        with context.bound(request_id="req-42"):
            actor_messages.send_execute_activity(broker, "act-7", queues.SIGNING)
        assert done.wait(30)
        broker.join(queues.SIGNING)
        worker.join()
    finally:
        worker.stop(5000)
    assert seen == [{"request_id": "req-42", "activity_id": "act-7"}]
