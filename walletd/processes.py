"""Declaring every actor and running dramatiq workers in this process."""

from __future__ import annotations

import importlib
import threading

import dramatiq
from dramatiq import Worker

import consensus.actors
import consensus.sweeper
import workers.actors
from infra.bootstrap import Services
from infra.messaging import queues

#: Optional service packages whose ``actors.declare(services)`` exists once built.
OPTIONAL_ACTOR_MODULES = ("notifier.actors",)
#: Optional background loops: ``start(services, stop_event)`` per module.
OPTIONAL_LOOPS = ("notifier.sweeper",)


def declare_all(services: Services) -> list[dramatiq.Actor]:
    """Declare every actor of every service package on ``services.broker``."""
    actors = list(consensus.actors.declare(services)) + list(workers.actors.declare(services))
    for name in OPTIONAL_ACTOR_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as ex:
            if ex.name != name:
                raise
            continue
        actors.extend(module.declare(services))
    return actors


class Workers:
    """One dramatiq :class:`Worker` per queue in this process, started and stopped together.

    A worker has one pool of threads for all the queues it consumes, so one worker over
    several queues lets a slow queue (signing) occupy every thread and starve the others
    (consensus, notifications). One worker per queue gives each queue its own pool.
    """

    def __init__(self, workers: dict[str, Worker]) -> None:
        self.by_queue = workers

    def stop(self, timeout: int = 600_000) -> None:
        """Stop every worker (each lets its in-flight messages finish within ``timeout`` ms)."""
        for worker in self.by_queue.values():
            worker.stop(timeout)


def start_workers(services: Services, queue_names: set[str], threads: int | None,
                  stop: threading.Event, sweep: bool = True) -> Workers:
    """Start one dramatiq worker per queue of ``queue_names`` (plus the sweepers when asked).

    Each queue gets ``threads`` threads, or when ``None`` its own count from the settings
    (``WALLETD_WORKER_THREADS_<QUEUE>``, default ``WALLETD_WORKER_THREADS``).
    """
    workers: dict[str, Worker] = {}
    for name in sorted(queue_names):
        count = threads or services.settings.threads_for(name)
        workers[name] = Worker(services.broker, queues={name}, worker_threads=count)
        workers[name].start()
    if sweep and queues.CONSENSUS in queue_names:
        consensus.sweeper.start(services, stop)
    if sweep and queues.NOTIFICATIONS in queue_names:
        for name in OPTIONAL_LOOPS:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as ex:
                if ex.name != name:
                    raise
                continue
            module.start(services, stop)
    return Workers(workers)
