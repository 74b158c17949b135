"""Building the dramatiq broker from the broker URL.

``amqp://`` → RabbitMQ (production), ``redis://`` → Redis, ``memory://`` → an in-process
broker for the embedded default. Every queue is declared up front so sends by actor name
work before (or without) the actors being declared in this process.
"""

from __future__ import annotations

from collections.abc import Sequence

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import Middleware

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
        broker.emit_after("process_boot")
    else:
        raise ValueError(f"unsupported WALLETD_BROKER_URL {url!r} (amqp://, redis:// or memory://)")
    for each in middleware:
        broker.add_middleware(each)
    for name in queues.ALL:
        broker.declare_queue(name)
    return broker


def ping(broker: dramatiq.Broker) -> None:
    """Raise if the broker cannot be reached."""
    from dramatiq.brokers.rabbitmq import RabbitmqBroker
    from dramatiq.brokers.redis import RedisBroker

    if isinstance(broker, RabbitmqBroker):
        broker.get_queue_message_counts(queues.CONSENSUS)
    elif isinstance(broker, RedisBroker):
        broker.client.ping()
