"""What a worker-type process runs: its actors, its pools and its background loops.

Every thread of a worker-type process is named in this module: the composition root's own
(:data:`COMPOSITION_THREADS`: ``infra.bootstrap`` opens them while it builds the services),
one dramatiq pool per queue (:func:`start_workers`) and the background loops (:data:`LOOPS`,
each with its owner and how often it runs). The role's entry point (``walletd up``,
``walletd worker``) starts them here and nothing starts a thread on first use;
:func:`thread_names` says which threads a process must then have, and
``tests/integration/test_role_threads.py`` holds every role to it. ``infra.bootstrap`` cannot
name the loops itself: the kernel imports no service package (``pyproject.toml``).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import dramatiq
from dramatiq import Worker
from dramatiq.common import dq_name

import consensus.actors
import consensus.sweeper
import notifier.actors
import notifier.sweeper
import workers.actors
from infra.audit import worker as audit_worker
from infra.bootstrap import bootstrap
from infra.broadcast import tracker
from infra.db.models.seal import REPORT_INTERVAL_S
from infra.messaging import queues
from infra.messaging.broker import boot
from infra.seal import reports as seal_reports
from infra.seal.state import SealState
from infra.seal.wiring import current_seal
from infra.services import Services
from infra.settings import Settings
from infra.worker_services import email_events_of

log = logging.getLogger(__name__)

#: How often (ms) an idle dramatiq thread wakes up, which bounds how long a stop takes to be
#: noticed (dramatiq's default, 1 s, made every pool take up to 2 s to stop).
IDLE_WAKEUP_MS = 250
#: The queues whose messages execute activities (and so may send email).
ACTIVITY_QUEUES: Final = frozenset({queues.CONSENSUS, queues.SIGNING, queues.ACCOUNTS})


def declare_all(services: Services) -> list[dramatiq.Actor[[str], None]]:
    """Declare every actor of every service package on ``services.broker``."""
    return [*consensus.actors.declare(services), *workers.actors.declare(services),
            *notifier.actors.declare(services)]


@dataclass(frozen=True)
class Loop:
    """A background loop of a worker-type process.

    Attributes:
        threads: The names of the threads ``start`` starts.
        owner: The module that holds the loop's work.
        every: How often it runs (the setting, or what wakes it).
        queues: It runs in a process consuming any of these queues.
        once: One per worker group (the first of ``walletd worker --processes N``); else
            every process.
        start: ``start(services, stop)`` starts its threads; they end once ``stop`` is set.
    """

    threads: tuple[str, ...]
    owner: str
    every: str
    queues: frozenset[str]
    once: bool
    start: Callable[[Services, threading.Event], Any]


def _report_seal(services: Services, stop: threading.Event) -> None:
    seal = current_seal(services)
    if seal is not None:
        seal_reports.start(services, seal, stop)


def _write_email_events(services: Services, stop: threading.Event) -> None:
    email_events_of(services).start(stop)


#: Every background loop of a worker-type process, with its owner and period.
LOOPS: Final = (
    Loop(("walletd-sweeper",), "consensus.sweeper", "WALLETD_SWEEP_INTERVAL_S",
         frozenset({queues.CONSENSUS}), True, consensus.sweeper.start),
    Loop(("walletd-audit-log",), "infra.audit.worker", "WALLETD_AUDIT_CHECKPOINT_INTERVAL_S",
         frozenset({queues.CONSENSUS}), True, audit_worker.start),
    # Broadcasting re-signs stuck transactions: it runs where the signing keys are.
    Loop(("walletd-broadcast",), "infra.broadcast.tracker", "WALLETD_BROADCAST_POLL_MS",
         frozenset({queues.SIGNING}), True, tracker.start),
    Loop(("walletd-webhook-relay",), "notifier.sweeper",
         f"woken by {notifier.sweeper.CHANNEL}, at least every {notifier.sweeper.IDLE_S} s",
         frozenset({queues.NOTIFICATIONS}), True, notifier.sweeper.start),
    Loop(("walletd-seal-report", "walletd-seal-report-stop"), "infra.seal.reports",
         f"every {REPORT_INTERVAL_S} s and at each seal change", frozenset(queues.ALL), False,
         _report_seal),
    Loop(("walletd-email-events",), "infra.sessions.email_events", "as events are queued",
         ACTIVITY_QUEUES, False, _write_email_events),
)


@dataclass(frozen=True)
class CompositionThread:
    """A thread ``infra.bootstrap`` starts while it builds a role's services."""

    name: str
    owner: str
    when: Callable[[Services], bool]


#: The threads of the composition root itself.
COMPOSITION_THREADS: Final = (
    # The process's one LISTEN connection (PostgreSQL): waiters, caches, the relay.
    CompositionThread("walletd-listener", "infra.db.listen",
                      lambda s: s.role != "cli" and s.engine.dialect.name == "postgresql"),
    # ``walletd operator``'s way into a worker's seal (docs/CUSTODY.md).
    CompositionThread("walletd-seal-admin", "infra.seal.admin",
                      lambda s: s.role in ("worker", "embedded") and _has_admin(s)),
    # dramatiq's time limits: started when a process that consumes messages boots its pools
    # (``infra.messaging.broker.boot``, from ``start_workers``); ``walletd up``'s ingress
    # shares the pools' process and broker.
    CompositionThread("dramatiq-time-limit", "dramatiq.middleware.time_limit",
                      lambda s: s.role in ("worker", "embedded")),
    # An auto seal that could not unseal at start retries in the background.
    CompositionThread("walletd-seal-retry", "infra.seal.state",
                      lambda s: s.role in ("worker", "embedded") and _retries(s)),
)


def _has_admin(services: Services) -> bool:
    seal = current_seal(services)
    return seal is not None and getattr(seal, "admin", None) is not None


def _retries(services: Services) -> bool:
    seal = current_seal(services)
    return seal is not None and seal.type != "static" and seal.sealed


def loops_of(queue_names: set[str], sweep: bool) -> list[Loop]:
    """The loops of a process consuming ``queue_names`` (``sweep``: it is its group's first)."""
    return [loop for loop in LOOPS
            if loop.queues & queue_names and (sweep or not loop.once)]


def thread_names(services: Services, queue_names: set[str] | None = None,
                 threads: int | None = None, sweep: bool = True) -> Counter[str]:
    """The threads a process of ``services`` must run, by name: the composition root's and,
    for a worker-type process consuming ``queue_names``, its pools and loops."""
    names = Counter(t.name for t in COMPOSITION_THREADS if t.when(services))
    for name in sorted(queue_names or ()):
        for queue_name in (name, dq_name(name)):
            names[f"dramatiq-consumer-{queue_name}"] += 1
        names[f"dramatiq-worker-{name}"] += threads or services.settings.threads_for(name)
    for loop in loops_of(queue_names or set(), sweep):
        names.update(loop.threads)
    return names


@dataclass(frozen=True)
class WorkerProcess:
    """A running ``walletd worker`` process: its services, its pools, its loops' stop."""

    services: Services
    pools: Workers
    stop: threading.Event
    queue_names: frozenset[str]
    threads: int | None
    sweep: bool

    def thread_names(self) -> Counter[str]:
        """The threads this process must run, by name."""
        return thread_names(self.services, set(self.queue_names), self.threads, self.sweep)

    def close(self) -> None:
        """End the loops; stop the pools (messages in flight finish within the shutdown
        timeout, the rest stay unacknowledged and are redelivered)."""
        self.stop.set()
        self.pools.stop(self.services.settings.shutdown_timeout_s * 1000)


def start_worker(settings: Settings, queue_names: set[str], threads: int | None,
                 sweep: bool = True) -> WorkerProcess:
    """A ``walletd worker`` process's services, actors, pools and loops, started."""
    services = bootstrap(settings, "worker", label=",".join(sorted(queue_names)),
                         queue_names=queue_names, threads=threads)
    declare_all(services)
    stop = threading.Event()
    pools = start_workers(services, queue_names, threads, stop, sweep=sweep)
    return WorkerProcess(services, pools, stop, frozenset(queue_names), threads, sweep)


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
    """Start one dramatiq worker per queue of ``queue_names`` and the process's loops
    (:func:`loops_of`; ``sweep``: also those one process of a worker group runs).

    Each queue gets ``threads`` threads, or when ``None`` its own count from the settings
    (``WALLETD_WORKER_THREADS_<QUEUE>``, default ``WALLETD_WORKER_THREADS``). The loops end
    once ``stop`` is set.
    """
    workers: dict[str, Worker] = {}
    _expect_one_pool_per_queue(services.broker)
    boot(services.broker)  # dramatiq's time limits: enforced from here on
    seal = current_seal(services)
    gated = {q for q in queue_names if q in KEY_QUEUES} if seal is not None else set()

    def build(name: str) -> Worker:
        count = threads or services.settings.threads_for(name)
        worker = Worker(services.broker, queues={name}, worker_threads=count,
                        worker_timeout=IDLE_WAKEUP_MS)
        worker.start()
        _name_threads(name, worker)
        return worker

    for name in sorted(queue_names - gated):
        workers[name] = build(name)
    pools = Workers(workers)
    if seal is not None and gated:
        _gate(seal, pools, gated, build, services.settings.shutdown_timeout_s * 1000)
    for loop in loops_of(queue_names, sweep):
        loop.start(services, stop)
    return pools


def _name_threads(queue: str, worker: Worker) -> None:
    """Name a pool's threads after its queue (``thread_names`` expects them)."""
    for queue_name, consumer in worker.consumers.items():
        consumer.name = f"dramatiq-consumer-{queue_name}"
    for thread in worker.workers:
        thread.name = f"dramatiq-worker-{queue}"


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
