"""What one notifier process remembers per webhook endpoint: its runs and its health.

Both are this process's alone: the database holds the truth (leases, ``failing_since``); this
memory only spares statements (a process runs at most its cap of runs per endpoint; a health
that did not change is not written again).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime

log = logging.getLogger(__name__)

class EndpointSlots:
    """Runs of this process per endpoint, at most ``cap`` at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken: dict[str, int] = {}

    def take(self, endpoint_id: str, cap: int) -> bool:
        with self._lock:
            if self._taken.get(endpoint_id, 0) >= cap:
                return False
            self._taken[endpoint_id] = self._taken.get(endpoint_id, 0) + 1
            return True

    def release(self, endpoint_id: str) -> None:
        with self._lock:
            left = self._taken.get(endpoint_id, 0) - 1
            if left > 0:
                self._taken[endpoint_id] = left
            else:
                self._taken.pop(endpoint_id, None)


@dataclass
class Health:
    """What this process knows of one endpoint's health."""

    failing_since: datetime | None = None
    known: bool = False
    last_success: float = float("-inf")


class HealthMemory:
    """Per endpoint: whether it is marked failing, as last written or read by this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_endpoint: dict[str, Health] = {}

    def get(self, endpoint_id: str) -> Health:
        with self._lock:
            health = self._by_endpoint.get(endpoint_id)
            if health is None:
                health = self._by_endpoint[endpoint_id] = Health()
            return health

    def observe(self, endpoint_id: str, failing_since: datetime | None) -> None:
        """The endpoint's row as just read."""
        health = self.get(endpoint_id)
        health.failing_since, health.known = failing_since, True
