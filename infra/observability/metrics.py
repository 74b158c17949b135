"""The Prometheus metrics of every walletd role, served at ``/metrics``.

Counted where the work happens (each process counts what it did; Prometheus sums the roles):

- ``walletd_activities_total{type,status}``: activities entering a status (creation included),
  counted once their transaction commits (:mod:`infra.observability.activities`).
- ``walletd_activity_settle_seconds{type,status}``: submission to a settled status
  (COMPLETED, FAILED, REJECTED, CONSENSUS_NEEDED).
- ``walletd_messages_total{queue,actor,outcome}``, ``walletd_message_seconds{queue,actor}``,
  ``walletd_messages_in_progress{queue,actor}``: broker messages (``messages.Observe``).
- ``walletd_sweeper_resends_total``: activities the sweeper re-sent (their message was lost).

Read from the broker and the database at scrape time (the same from every role):

- ``walletd_queue_messages{queue,kind}``: messages waiting (``ready``) or delayed (``delayed``).
- ``walletd_webhook_backlog``: webhook deliveries not yet delivered nor given up.
- ``walletd_webhook_attempts_total{outcome}``: webhook attempts recorded, by outcome.

Processes that fork or spawn workers (gunicorn, ``walletd worker``) run in prometheus-client's
multiprocess mode: the supervisor sets ``PROMETHEUS_MULTIPROC_DIR``
(:mod:`infra.observability.multiprocess`) before this module is first imported, each process
writes its values there and the process serving ``/metrics`` adds them up. Import this module
lazily (inside functions) from code that may run before that.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from sqlalchemy import func, select

from infra.messaging import queues
from infra.observability import multiprocess as multiprocess_dir

if TYPE_CHECKING:
    from infra.services import Services

log = logging.getLogger(__name__)

ACTIVITIES: Final = Counter(
    "walletd_activities", "Activities entering a status (creation included), by type and status.",
    ["type", "status"])
SETTLE_SECONDS: Final = Histogram(
    "walletd_activity_settle_seconds",
    "Seconds from an activity's submission to its settled status, by type and status.",
    ["type", "status"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600))
MESSAGES: Final = Counter(
    "walletd_messages", "Broker messages processed, by queue, actor and outcome (ok, error).",
    ["queue", "actor", "outcome"])
MESSAGE_SECONDS: Final = Histogram(
    "walletd_message_seconds", "Seconds an actor spent on a message, by queue and actor.",
    ["queue", "actor"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
IN_PROGRESS: Final = Gauge(
    "walletd_messages_in_progress", "Broker messages being processed now, by queue and actor.",
    ["queue", "actor"], multiprocess_mode="livesum")
SWEEPER_RESENDS: Final = Counter(
    "walletd_sweeper_resends",
    "Activities the sweeper re-sent to consensus because they sat PENDING past the grace period.")

# -- exposition -----------------------------------------------------------------------------

class _Union:
    def __init__(self, *collectors: Any) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.collect()


def exposition(services: Services) -> tuple[bytes, str]:
    """The metrics page (body, content type) this process serves."""
    if os.environ.get(multiprocess_dir.ENV):
        from prometheus_client import multiprocess

        counted: Any = CollectorRegistry()
        multiprocess.MultiProcessCollector(counted)
    else:
        counted = REGISTRY
    return generate_latest(_Union(counted, StateCollector(services))), CONTENT_TYPE_LATEST


class StateCollector(Collector):
    """Gauges read at scrape time from the broker and the database."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def collect(self) -> Iterable[Metric]:
        for read in (self._queues, self._webhooks, self._seal):
            try:
                yield from read()
            except Exception as ex:  # a scrape never fails because a dependency is down
                log.warning("metrics: %s unavailable: %s", read.__name__.strip("_"), ex)

    def _queues(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("walletd_queue_messages",
                                  "Messages waiting in a queue (ready) or its delay queue (delayed).",
                                  labels=["queue", "kind"])
        for name in queues.ALL:
            ready, delayed = queue_depth(self.services.broker, name)
            depth.add_metric([name, "ready"], ready)
            depth.add_metric([name, "delayed"], delayed)
        yield depth

    def _webhooks(self) -> Iterator[Metric]:
        from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery
        from infra.webhooks.schedule import DeliveryState

        with self.services.read_session_factory() as session:
            backlog = session.scalar(select(func.count()).select_from(WebhookDelivery).where(
                WebhookDelivery.status == DeliveryState.PENDING.value))
            attempts = session.execute(select(WebhookAttempt.outcome, func.count()).group_by(
                WebhookAttempt.outcome)).all()
        yield GaugeMetricFamily("walletd_webhook_backlog",
                                "Webhook deliveries not yet delivered nor given up.", value=backlog or 0)
        total = CounterMetricFamily("walletd_webhook_attempts", "Webhook delivery attempts recorded.",
                                    labels=["outcome"])
        for outcome, count in attempts:
            total.add_metric([outcome], count)
        yield total


    def _seal(self) -> Iterator[Metric]:
        from infra.seal.wiring import seal_statuses

        statuses = seal_statuses(self.services)
        if not statuses:
            return
        sealed = GaugeMetricFamily("walletd_sealed", "1 while a process of this role is sealed "
                                   "(holds no root key; consumes no key-needing queue).",
                                   labels=["pid", "type"])
        progress = GaugeMetricFamily("walletd_seal_unseal_progress",
                                     "Unseal shares entered towards the threshold.", labels=["pid"])
        for status in statuses:
            pid = str(status.get("pid", ""))
            sealed.add_metric([pid, str(status.get("type", ""))], 1 if status.get("sealed") else 0)
            progress.add_metric([pid], int(status.get("progress", 0)))
        yield sealed
        yield progress


def queue_depth(broker: Any, queue_name: str) -> tuple[int, int]:
    """Messages ready and delayed on ``queue_name`` (0, 0 for an unknown broker type)."""
    from dramatiq.brokers.rabbitmq import RabbitmqBroker
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.brokers.stub import StubBroker
    from dramatiq.common import dq_name

    if isinstance(broker, RabbitmqBroker):
        ready, delayed, _dead = broker.get_queue_message_counts(queue_name)
        return ready, delayed
    if isinstance(broker, RedisBroker):
        key = f"{broker.namespace}:{queue_name}"
        return int(broker.client.llen(key)), int(broker.client.llen(f"{key}.DQ"))
    if isinstance(broker, StubBroker):
        return broker.queues[queue_name].qsize(), broker.queues[dq_name(queue_name)].qsize()
    return 0, 0
