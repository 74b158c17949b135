"""Declaring every actor and running dramatiq workers in this process."""

from __future__ import annotations

import importlib
import logging
import threading

import dramatiq
from dramatiq import Worker

import consensus.actors
import consensus.sweeper
import workers.actors
from infra.broadcast import tracker
from infra.messaging import queues
from infra.services import Services

#: Optional service packages whose ``actors.declare(services)`` exists once built.
OPTIONAL_ACTOR_MODULES = ("notifier.actors",)
#: Optional background loops: ``start(services, stop_event)`` per module.
OPTIONAL_LOOPS = ("notifier.sweeper",)
#: How often (ms) an idle dramatiq thread wakes up, which bounds how long a stop takes to be
#: noticed (dramatiq's default, 1 s, made every pool take up to 2 s to stop).
IDLE_WAKEUP_MS = 250


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

    def alive(self) -> bool:
        """Every pool's threads are running (a liveness check)."""
        return all(thread.is_alive() for worker in self.by_queue.values()
                   for thread in [*worker.workers, *worker.consumers.values()])

    def stop(self, timeout: int = 600_000) -> None:
        """Stop every worker at once; each lets its in-flight messages finish within ``timeout``
        ms (a message still running then is not acknowledged: the broker redelivers it).

        In parallel: a dramatiq worker's threads notice the stop within its idle timeout, so
        stopping the pools one after another took that long per pool.
        """
        stopping = [threading.Thread(target=worker.stop, args=(timeout,), name=f"stop-{name}")
                    for name, worker in self.by_queue.items()]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()


class _OnePoolPerQueue(logging.Filter):
    """Drop dramatiq's warning about a second ``_WorkerMiddleware`` on one broker.

    Every dramatiq ``Worker`` registers its own ``_WorkerMiddleware`` (it adds the worker's
    consumers as queues are declared) and the broker warns when a middleware of a type it
    already has is added. One worker per queue is deliberate here (see :class:`Workers`), so
    the second, third and fourth pools each warned once per pool before them (six lines at
    every start). Any other duplicate middleware still warns.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        duplicate_worker = (isinstance(record.msg, str) and "same type twice" in record.msg
                            and bool(record.args) and isinstance(record.args, tuple)
                            and type(record.args[0]).__name__ == "_WorkerMiddleware")
        return not duplicate_worker


def _expect_one_pool_per_queue(broker: dramatiq.Broker) -> None:
    if not any(isinstance(f, _OnePoolPerQueue) for f in broker.logger.filters):
        broker.logger.addFilter(_OnePoolPerQueue())


def start_workers(services: Services, queue_names: set[str], threads: int | None,
                  stop: threading.Event, sweep: bool = True) -> Workers:
    """Start one dramatiq worker per queue of ``queue_names`` (plus the sweepers when asked).

    Each queue gets ``threads`` threads, or when ``None`` its own count from the settings
    (``WALLETD_WORKER_THREADS_<QUEUE>``, default ``WALLETD_WORKER_THREADS``).
    """
    workers: dict[str, Worker] = {}
    _expect_one_pool_per_queue(services.broker)
    for name in sorted(queue_names):
        count = threads or services.settings.threads_for(name)
        workers[name] = Worker(services.broker, queues={name}, worker_threads=count,
                               worker_timeout=IDLE_WAKEUP_MS)
        workers[name].start()
    if sweep and queues.CONSENSUS in queue_names:
        consensus.sweeper.start(services, stop)
    if sweep and queues.SIGNING in queue_names:
        # Broadcasting re-signs stuck transactions: it runs where the signing keys are.
        tracker.start(services, stop)
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
