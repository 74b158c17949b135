"""The notifier of a process: what the ``deliver_webhook`` actor runs with.

:func:`build_notifier` makes it once per worker process (``notifier.actors.declare``) from the
worker services: the webhook signing key ring, the destinations allow list, the retry
schedule, the per-endpoint cap of runs and this process's per-endpoint memory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from infra.errors import Internal
from infra.messaging import queues
from infra.services import Services
from infra.webhooks import endpoints as endpoint_rules
from infra.webhooks.destinations import AllowList, Resolver, system_resolver
from infra.webhooks.schedule import (
    DEFAULT_DISABLE_AFTER_MS,
    RetrySchedule,
)
from infra.worker_services import WorkerServices
from notifier.delivery import DeliveryConfig, Transports
from notifier.dispatch import MAX_IN_FLIGHT_PER_ENDPOINT, in_flight_cap
from notifier.memory import EndpointSlots, HealthMemory

log = logging.getLogger(__name__)

#: Lease time beyond the attempt's deadline: signing before it, resolving the name, recording.
LEASE_MARGIN = timedelta(seconds=10)


#: How long one run keeps sending an endpoint's due rows before handing on through the broker.
RUN_BUDGET_S = 2.0


#: Rows a run leases at once (sent one after the other, recorded together).
RUN_BATCH = 16


#: How long a run sends before recording what it sent (and renewing its other leases).
RUN_BATCH_WINDOW_S = 0.05


@dataclass
class Notifier:
    """What the deliver actor runs with (built once per process by :func:`build_notifier`)."""

    services: Services
    keys: Any  # ``.ring()``: SealedKeyRing (tests may give a plaintext KeyRingFile)
    allow: AllowList
    schedule: RetrySchedule = field(default_factory=RetrySchedule)
    config: DeliveryConfig = field(default_factory=DeliveryConfig)
    resolver: Resolver = system_resolver
    disable_after_ms: int = DEFAULT_DISABLE_AFTER_MS
    max_in_flight: int = MAX_IN_FLIGHT_PER_ENDPOINT
    run_budget_s: float = RUN_BUDGET_S
    #: Rows a run leases at once, sends one after the other and records together.
    batch: int = RUN_BATCH
    #: A run records what it sent at least this often (and before sending a row leased
    #: longer ago), so a lease always outlives the attempt that holds it.
    batch_window_s: float = RUN_BATCH_WINDOW_S
    slots: EndpointSlots = field(default_factory=EndpointSlots)
    health: HealthMemory = field(default_factory=HealthMemory)
    transports: Transports | None = None

    def __post_init__(self) -> None:
        if self.transports is None:
            self.transports = Transports(self.max_in_flight)

    @property
    def lease(self) -> timedelta:
        """The sending lease: the attempt's deadline plus :data:`LEASE_MARGIN`.

        ``attempt_delivery`` sends no byte after its deadline and stops reading at it, so a
        lease this long outlives every send of the attempt that holds it.
        """
        return timedelta(seconds=self.config.total_timeout_s) + LEASE_MARGIN

    @property
    def dispatch_grace(self) -> timedelta:
        """How long a queued message is trusted before the relay dispatches the row again."""
        return timedelta(seconds=max(60, 6 * self.services.settings.sweep_interval_s))


def build_notifier(services: Services, **overrides: Any) -> Notifier:
    """The notifier of this process (its key ring is the worker services' one)."""
    if not isinstance(services, WorkerServices):  # the ring exists only in worker processes
        raise Internal("the notifier runs in worker processes only")
    keys = services.webhook_keys
    allow = endpoint_rules.allow_list(services.settings.webhook_allow)
    overrides.setdefault(
        "max_in_flight", in_flight_cap(services.settings.threads_for(queues.NOTIFICATIONS))
    )
    return Notifier(services=services, keys=keys, allow=allow, **overrides)
