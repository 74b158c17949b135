"""Declaring every actor and running dramatiq workers in this process."""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable

import dramatiq
from dramatiq import Worker

import consensus.actors
import consensus.sweeper
import workers.actors
from infra.broadcast import tracker
from infra.messaging import queues
from infra.seal import reports as seal_reports
from infra.seal.state import SealState
from infra.seal.wiring import current_seal
from infra.services import Services

log = logging.getLogger(__name__)

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
        self._lock = threading.Lock()

    def alive(self) -> bool:
        """Every pool's threads are running (a liveness check)."""
        with self._lock:
            running = list(self.by_queue.values())
        return all(thread.is_alive() for worker in running
                   for thread in [*worker.workers, *worker.consumers.values()])

    def add(self, name: str, worker: Worker) -> None:
        with self._lock:
            self.by_queue[name] = worker

    def remove(self, name: str) -> Worker | None:
        with self._lock:
            return self.by_queue.pop(name, None)

    def stop(self, timeout: int = 600_000) -> None:
        """Stop every worker at once; each lets its in-flight messages finish within ``timeout``
        ms (a message still running then is not acknowledged: the broker redelivers it).

        In parallel: a dramatiq worker's threads notice the stop within its idle timeout, so
        stopping the pools one after another took that long per pool.
        """
        with self._lock:
            running = dict(self.by_queue)
        stopping = [threading.Thread(target=worker.stop, args=(timeout,), name=f"stop-{name}")
                    for name, worker in running.items()]
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
    seal = current_seal(services)
    gated = {q for q in queue_names if q in KEY_QUEUES} if seal is not None else set()

    def build(name: str) -> Worker:
        count = threads or services.settings.threads_for(name)
        worker = Worker(services.broker, queues={name}, worker_threads=count,
                        worker_timeout=IDLE_WAKEUP_MS)
        worker.start()
        return worker

    for name in sorted(queue_names - gated):
        workers[name] = build(name)
    pools = Workers(workers)
    if seal is not None and gated:
        _gate(seal, pools, gated, build, services.settings.shutdown_timeout_s * 1000)
    if seal is not None:
        seal_reports.start(services, seal, stop)  # the console's seal state
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
    return pools


#: Queues whose messages need a key: not consumed while the process is sealed (the messages
#: wait in the broker; their activities stay PENDING and complete once unsealed).
KEY_QUEUES = frozenset({queues.SIGNING, queues.ACCOUNTS, queues.NOTIFICATIONS})


def _gate(seal: SealState, pools: Workers, gated: set[str], build: Callable[[str], Worker],
          timeout_ms: int) -> None:
    """Consume ``gated`` queues only while ``seal`` is unsealed."""
    lock = threading.Lock()

    def apply(sealed: bool) -> None:
        with lock:
            if not sealed:
                for name in sorted(gated):
                    if name not in pools.by_queue:
                        pools.add(name, build(name))
                log.info("unsealed: consuming %s", ", ".join(sorted(gated)))
                return
            stopping = [w for w in (pools.remove(n) for n in sorted(gated)) if w is not None]
        log.warning("sealed: no longer consuming %s", ", ".join(sorted(gated)))
        for worker in stopping:  # in-flight messages finish; the rest wait in the broker
            threading.Thread(target=worker.stop, args=(timeout_ms,), daemon=True).start()

    seal.listeners.append(lambda sealed: threading.Thread(
        target=apply, args=(sealed,), name="walletd-seal-gate", daemon=True).start())
    if seal.sealed:
        log.warning("sealed (%s): not consuming %s until unsealed", seal.reason,
                    ", ".join(sorted(gated)))
    else:
        apply(False)
