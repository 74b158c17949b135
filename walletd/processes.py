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


def start_workers(services: Services, queue_names: set[str], threads: int,
                  stop: threading.Event, sweep: bool = True) -> Worker:
    """Start a dramatiq worker on ``queue_names`` (plus the sweepers when asked)."""
    worker = Worker(services.broker, queues=queue_names, worker_threads=threads)
    worker.start()
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
    return worker
