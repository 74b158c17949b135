"""The worker loop that appends staged leaves and signs checkpoints (consensus pool)."""

from __future__ import annotations

import logging
import threading
from typing import Any

from infra.audit import checkpoints
from infra.audit.seal_events import SealEventRecorder
from infra.seal.wiring import seal_config
from infra.worker_services import log_keys

log = logging.getLogger(__name__)


def start(services: Any, stop: threading.Event) -> threading.Thread:
    """Every ``audit_checkpoint_interval_s`` in a daemon thread: record the seal's new
    events (``infra.audit.seal_events``), then issue a checkpoint."""
    interval = services.settings.audit_checkpoint_interval_s
    seal_events = SealEventRecorder(seal_config(services.settings).keyring_file, services.uow)

    def loop() -> None:
        while not stop.wait(interval):
            try:
                seal_events()
                checkpoints.issue(services, log_keys(services))
            except Exception:
                log.exception("audit checkpoint failed; retrying next interval")

    thread = threading.Thread(target=loop, name="walletd-audit-log", daemon=True)
    thread.start()
    return thread
