"""Building the dramatiq broker from the broker URL.

``amqp://`` → RabbitMQ (production), ``redis://`` → Redis, ``memory://`` → an in-process
broker for the embedded default. Every queue is declared up front so sends by actor name
work before (or without) the actors being declared in this process.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import Middleware, TimeLimit

from infra.messaging import queues


def build_broker(url: str, middleware: Sequence[Middleware] = ()) -> dramatiq.Broker:
    """A broker for ``url`` with ``middleware`` added in order (``infra.bootstrap`` passes the
    observability middleware) and every walletd queue declared."""
    broker: dramatiq.Broker
    if url.startswith(("amqp://", "amqps://")):
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        broker = RabbitmqBroker(url=url, confirm_delivery=True)
    elif url.startswith(("redis://", "rediss://")):
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(url=url)
    elif url.startswith("memory://"):
        broker = StubBroker()
    else:
        raise ValueError(f"unsupported WALLETD_BROKER_URL {url!r} (amqp://, redis:// or memory://)")
    for each in middleware:
        broker.add_middleware(each)
    for name in queues.ALL:
        broker.declare_queue(name)
    return broker


def boot(broker: dramatiq.Broker) -> None:
    """Announce this process's boot to ``broker``'s middleware, once: dramatiq's TimeLimit
    starts the thread that ends an actor run past its ``time_limit`` only then. dramatiq's
    own CLI announces it; walletd starts its pools itself (``walletd.processes``), so a
    process that consumes messages calls this before its pools start. Without it no time
    limit is enforced (a hung activity would hold its thread for good)."""
    if getattr(broker, "_walletd_booted", False):
        return
    broker._walletd_booted = True  # type: ignore[attr-defined]
    broker.emit_after("process_boot")
    for each in broker.middleware:
        if isinstance(each, TimeLimit) and isinstance(each.manager, threading.Thread):
            each.manager.name = "dramatiq-time-limit"


def ping(broker: dramatiq.Broker) -> None:
    """Raise if the broker cannot be reached.

    RabbitMQ: a passive declaration of the consensus queue on this thread's connection. That
    connection may be one RabbitMQ has since closed (a thread that sat idle misses heartbeats:
    a ``BlockingConnection`` only answers them while it is used), which says nothing about
    the broker now: it is dropped and the check is made once more on a fresh connection, and
    only that answer counts.
    """
    from dramatiq.brokers.rabbitmq import RabbitmqBroker
    from dramatiq.brokers.redis import RedisBroker

    if isinstance(broker, RabbitmqBroker):
        try:
            broker.channel.queue_declare(queue=queues.CONSENSUS, durable=True, passive=True)
        except Exception:
            with contextlib.suppress(Exception):
                del broker.connection  # closes it if it is still open; the next use reconnects
            broker.channel.queue_declare(queue=queues.CONSENSUS, durable=True, passive=True)
    elif isinstance(broker, RedisBroker):
        broker.client.ping()
