"""``walletd``: run the service.

Commands:
    up          embedded default: SQLite under the data dir, in-process broker and worker
                threads, the API on one port (creates the root organization on first start)
    ingress     the public API under gunicorn (production)
    auth-proxy  the auth proxy under gunicorn (production; `up` serves it on the API port + 1)
    worker      dramatiq worker processes for the given queues (production)
    health      exit 0 when a running role answers its health check (container probes)
    migrate     bring the database schema up to date
    bootstrap   create the root organization and API key if the database is empty
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from infra.authproxy.keys import published_public_key
from infra.bootstrap import bootstrap
from infra.db.migrate import upgrade
from infra.identity.root import KEY_FILE, ensure_root
from infra.messaging import queues
from infra.seal.wiring import STATUSES
from infra.settings import Settings

log = logging.getLogger("walletd")

#: Extra subcommands: ``name -> (configure(subparser), run(args, settings) -> int)``.
EXTRA_COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None],
                                Callable[[argparse.Namespace, Settings], int]]] = {}


def _register_extra_commands() -> None:
    from walletd import dashboard, health, keys, operator, webhooks

    EXTRA_COMMANDS.setdefault("operator", operator.COMMAND)
    EXTRA_COMMANDS.setdefault("dashboard-link", dashboard.COMMAND)
    EXTRA_COMMANDS.setdefault("health", health.COMMAND)
    EXTRA_COMMANDS.setdefault("keys", keys.COMMAND)
    EXTRA_COMMANDS.setdefault("webhooks", webhooks.COMMAND)


_register_extra_commands()


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    changes: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        changes["data_dir"] = args.data_dir
        if "WALLETD_MASTER_KEY_FILE" not in os.environ:
            changes["master_key_file"] = str(os.path.join(args.data_dir, "master-keys.json"))
    if getattr(args, "command", "") != "up":
        changes["seal_default"] = "shamir"  # production: only `walletd up` defaults to static
    if getattr(args, "port", None):
        changes["port"] = args.port
    if getattr(args, "host", None):
        changes["host"] = args.host
    if getattr(args, "auth_proxy_port", None):
        changes["auth_proxy_port"] = args.auth_proxy_port
    from pathlib import Path

    if "data_dir" in changes:
        changes["data_dir"] = Path(changes["data_dir"])
    return replace(settings, **changes)


def _wait_for_signal() -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()


def _exit_quickly() -> None:
    """Spare the interpreter's final garbage collection of every live object (over a second
    for this heap): the process is about to end and the OS frees its memory anyway."""
    import gc

    gc.freeze()


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.effective_database_url)
    print("database is up to date")
    return 0


def cmd_bootstrap(args: argparse.Namespace, settings: Settings) -> int:
    services = bootstrap(settings, "cli")
    path = ensure_root(services)
    print(f"root API key written to {path}" if path else "an organization exists already")
    public = published_public_key(settings)
    print(f"auth proxy public key: {public}" if public else
          "no sealed keyring yet: run `walletd operator init` (docs/CUSTODY.md)")
    return 0


def cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from authproxy.app import create_app as create_proxy_app
    from infra.authproxy.keys import ProxyKey
    from infra.seal.wiring import seal_of
    from ingress.app import create_app
    from walletd.processes import declare_all, start_workers

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "embedded")
    created = ensure_root(services)
    key_file = settings.data_dir / KEY_FILE
    print(("created root organization; " if created else "") + f"root API key: {key_file}",
          flush=True)
    declare_all(services)
    stop = threading.Event()
    worker = start_workers(services, set(queues.ALL), None, stop)
    app = create_app(bootstrap(settings, "ingress", broker=services.broker))
    proxy_key = ProxyKey.load(settings, state=seal_of(services))

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        allow_reuse_address = True

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.debug(format, *args)

    httpd = make_server(settings.host, settings.port, app, server_class=Server,
                        handler_class=QuietHandler)
    proxyd = make_server(settings.host, settings.effective_auth_proxy_port,
                         create_proxy_app(settings, proxy_key=proxy_key), server_class=Server,
                         handler_class=QuietHandler)
    print(f"walletd listening on {settings.effective_base_url}", flush=True)
    print(f"auth proxy listening on {settings.effective_auth_proxy_url}", flush=True)
    print(f"dashboard: {settings.effective_base_url}/dashboard", flush=True)
    for server in (httpd, proxyd):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _wait_for_signal()
    finally:
        proxyd.shutdown()
        stop.set()
        closing = threading.Thread(target=httpd.shutdown)
        closing.start()
        worker.stop(settings.shutdown_timeout_s * 1000)
        closing.join()
        _exit_quickly()
    return 0


def cmd_ingress(args: argparse.Namespace, settings: Settings) -> int:
    from gunicorn.app.base import BaseApplication

    from infra.observability import multiprocess
    from ingress.app import create_app

    metrics_dir = multiprocess.use_dir()  # before any metric exists in the workers

    class Ingress(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{settings.host}:{settings.port}")
            self.cfg.set("workers", args.workers or settings.http_workers)
            self.cfg.set("threads", args.threads or settings.http_threads)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("accesslog", None)
            # SIGTERM: stop accepting, let in-flight requests finish for this long.
            self.cfg.set("graceful_timeout", settings.shutdown_timeout_s)
            self.cfg.set("keepalive", 5)
            self.cfg.set("child_exit", lambda _arbiter, worker: multiprocess.process_exited(worker.pid))
            self.cfg.set("worker_exit", lambda _arbiter, _worker: _exit_quickly())

        def load(self) -> Any:
            # Runs in each worker after fork: the ingress role never gets the master key.
            return create_app(bootstrap(settings, "ingress"))

    try:
        Ingress().run()
    finally:
        multiprocess.forget_dir(metrics_dir)
    return 0


def cmd_auth_proxy(args: argparse.Namespace, settings: Settings) -> int:
    from gunicorn.app.base import BaseApplication

    from authproxy.app import create_app

    public = published_public_key(settings)
    print(f"auth proxy public key: {public}" if public else
          "no sealed keyring yet: run `walletd operator init` (docs/CUSTODY.md)", flush=True)
    if args.init_key:
        return 0

    class AuthProxy(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{settings.host}:{settings.effective_auth_proxy_port}")
            self.cfg.set("workers", args.workers or settings.http_workers)
            self.cfg.set("threads", args.threads or settings.http_threads)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("accesslog", None)
            self.cfg.set("graceful_timeout", 10)
            self.cfg.set("keepalive", 5)

        def load(self) -> Any:
            return create_app(settings)

    AuthProxy().run()
    return 0


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    import multiprocessing

    names = {q.strip() for q in args.queues.split(",") if q.strip()} if args.queues else set(queues.ALL)
    unknown = names - set(queues.ALL)
    if unknown:
        print(f"unknown queues: {', '.join(sorted(unknown))}; known: {', '.join(queues.ALL)}",
              file=sys.stderr)
        return 2
    from infra.observability import multiprocess

    count = args.processes or settings.worker_processes
    threads = args.threads  # None: each queue's own count from the settings
    metrics_dir = multiprocess.use_dir()  # shared by the processes, served by this one
    try:
        if count == 1:
            _worker_process(settings, names, threads, sweep=True, probe=True)
            return 0
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=_worker_process, args=(settings, names, threads, i == 0))
                 for i in range(count)]
        for p in procs:
            p.start()
        probe_services = bootstrap(settings, "ingress", label="worker-probe")
        probe_services.extras[STATUSES] = _children_seal(settings, procs)
        probe = _probe(probe_services, lambda: all(p.is_alive() for p in procs))
        try:
            _wait_for_signal()
        finally:
            for p in procs:  # each lets its in-flight messages finish (shutdown timeout)
                p.terminate()
            for p in procs:
                p.join(settings.shutdown_timeout_s + 5)
            if probe is not None:
                probe.shutdown()
        return 0
    finally:
        multiprocess.forget_dir(metrics_dir)


def _children_seal(settings: Settings, procs: list[Any]) -> Callable[[], list[dict[str, Any]]]:
    """The seal statuses of this supervisor's worker processes, through their admin sockets
    (a child that does not answer counts as sealed)."""
    from infra.seal.admin import call_all
    from infra.seal.wiring import seal_config

    directory = seal_config(settings).socket_dir

    def statuses() -> list[dict[str, Any]]:
        answers = {int(a["status"]["pid"]): a["status"] for a in call_all(directory, {"op": "status"})
                   if a.get("ok") and "pid" in a.get("status", {})}
        return [answers.get(p.pid) or {"sealed": True, "pid": p.pid, "reason": "not answering"}
                for p in procs]

    return statuses


def _probe(services: Any, alive: Callable[[], bool]) -> Any:
    from walletd import probe

    return probe.serve(services, alive)


def _worker_process(settings: Settings, names: set[str], threads: int | None, sweep: bool,
                    probe: bool = False) -> None:
    from walletd.processes import declare_all, start_workers

    _configure_logging(settings)
    services = bootstrap(settings, "worker", label=",".join(sorted(names)), queue_names=names,
                         threads=threads)
    declare_all(services)
    stop = threading.Event()
    worker = start_workers(services, names, threads, stop, sweep=sweep)
    log.info("worker consuming %s", ", ".join(
        f"{name} ({len(w.workers)} threads)" for name, w in worker.by_queue.items()))
    server = _probe(services, worker.alive) if probe else None
    try:
        _wait_for_signal()
    finally:
        stop.set()
        # In-flight messages finish (then are acknowledged) within the shutdown timeout;
        # any still running then stay unacknowledged and the broker redelivers them.
        worker.stop(settings.shutdown_timeout_s * 1000)
        if server is not None:
            server.shutdown()
        _exit_quickly()


def _configure_logging(settings: Settings) -> None:
    from infra.observability.logs import configure

    configure(settings.log_level, settings.log_format)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="walletd", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="run everything in one process (SQLite, in-process broker)")
    up.add_argument("--data-dir")
    up.add_argument("--port", type=int)
    up.add_argument("--host")
    up.add_argument("--auth-proxy-port", type=int, dest="auth_proxy_port",
                    help="port of the auth proxy (default: the API port + 1)")
    up.set_defaults(run=cmd_up)
    ing = sub.add_parser("ingress", help="the public API under gunicorn")
    ing.add_argument("--port", type=int)
    ing.add_argument("--host")
    ing.add_argument("--workers", type=int)
    ing.add_argument("--threads", type=int)
    ing.set_defaults(run=cmd_ingress)
    prx = sub.add_parser("auth-proxy", help="the auth proxy under gunicorn (reaches the API at "
                         "WALLETD_API_URL)")
    prx.add_argument("--port", type=int, dest="auth_proxy_port")
    prx.add_argument("--host")
    prx.add_argument("--workers", type=int)
    prx.add_argument("--threads", type=int)
    prx.add_argument("--init-key", action="store_true",
                     help="print the proxy key's public half (made by `walletd operator init`), exit")
    prx.set_defaults(run=cmd_auth_proxy)
    wrk = sub.add_parser("worker", help="dramatiq worker processes")
    wrk.add_argument("--queues", help=f"comma-separated, default all: {','.join(queues.ALL)}")
    wrk.add_argument("--processes", type=int)
    wrk.add_argument("--threads", type=int)
    wrk.set_defaults(run=cmd_worker)
    mig = sub.add_parser("migrate", help="bring the database schema up to date")
    mig.add_argument("--data-dir")
    mig.set_defaults(run=cmd_migrate)
    boot = sub.add_parser("bootstrap", help="create the root organization if none exists")
    boot.add_argument("--data-dir")
    boot.set_defaults(run=cmd_bootstrap)
    for name, (configure, run) in EXTRA_COMMANDS.items():
        extra = sub.add_parser(name)
        configure(extra)
        extra.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = _settings(args)
    _configure_logging(settings)
    return int(args.run(args, settings))


if __name__ == "__main__":
    sys.exit(main())
