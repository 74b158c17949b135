"""The stack's floor: the production pipeline's shape with none of walletd's work in it.

What the architecture prescribes for one activity answered inline, done as cheaply as the
libraries allow, so that a run of ``bench/sign.py`` can say what the stack alone costs:

- the ingress, a Falcon app under the same gunicorn settings as ``walletd ingress``, reads
  the JSON body, stores the request durably (one ``INSERT``, committed), publishes its id on
  dramatiq's RabbitMQ broker with publisher confirms, and waits for the answer's
  ``NOTIFY`` on one ``LISTEN`` connection per process;
- the executor, a dramatiq worker of 8 threads, claims the row and settles it in one
  transaction (a guarded ``UPDATE … RETURNING``, then one statement that stores the result
  and sends the ``NOTIFY``) and acknowledges the message.

No stamp, no authentication, no policy, no audit leaf, no signature, no ORM: plain psycopg
on pooled connections. Everything walletd adds is above this line; what is below it is
gunicorn, Falcon, psycopg, PostgreSQL (two durable transactions), pika, RabbitMQ and dramatiq.

``python -m bench.stack_floor_app schema`` creates the table; ``… worker`` runs the
executor. Settings: ``FLOOR_DATABASE_URL`` (a libpq conninfo or URL), ``FLOOR_BROKER_URL``.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import dramatiq
import falcon
import psycopg
from dramatiq.brokers.rabbitmq import RabbitmqBroker

QUEUE: Final = "floor"
CHANNEL: Final = "floor_answers"
WAIT_S: Final = 5.0

_broker = RabbitmqBroker(url=os.environ.get("FLOOR_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672/"),
                         confirm_delivery=True)
dramatiq.set_broker(_broker)


class Pool:
    """Connections reused across requests (what SQLAlchemy's pool does, minus the rest)."""

    def __init__(self, dsn: str, size: int) -> None:
        self.dsn = dsn
        self.idle: queue.LifoQueue[psycopg.Connection] = queue.LifoQueue()
        self.slots = threading.BoundedSemaphore(size)

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        with self.slots:
            try:
                conn = self.idle.get_nowait()
            except queue.Empty:
                conn = psycopg.connect(self.dsn)
            try:
                with conn.transaction():
                    yield conn
            except BaseException:
                conn.close()
                raise
            self.idle.put(conn)


_pool = Pool(os.environ.get("FLOOR_DATABASE_URL", ""), 10)


@dramatiq.actor(queue_name=QUEUE, max_retries=3)
def execute(activity_id: str) -> None:
    """Claim the activity and settle it, one transaction; the answer rides the settle."""
    with _pool.transaction() as conn:
        row = conn.execute("UPDATE floor_activities SET status = 'claimed' "
                           "WHERE id = %s AND status = 'pending' RETURNING body",
                           (activity_id,), prepare=True).fetchone()
        if row is None:
            return
        answer = json.dumps({"activity": {"id": activity_id, "status": "COMPLETED",
                                          "result": json.loads(row[0])}})
        conn.execute("WITH settled AS (UPDATE floor_activities SET status = 'done', result = %s "
                     "WHERE id = %s RETURNING id) "
                     "SELECT pg_notify('" + CHANNEL + "', %s) FROM settled",
                     (answer, activity_id, activity_id + answer), prepare=True)


class Answers:
    """One ``LISTEN`` connection per process, handing each answer to the thread waiting for
    it (by the id its payload starts with)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.lock = threading.Lock()
        self.waiting: dict[str, tuple[threading.Event, list[str]]] = {}
        self.started = False

    def _start(self) -> None:
        ready = threading.Event()
        threading.Thread(target=self._listen, args=(ready,), daemon=True).start()
        ready.wait(10)

    def _listen(self, ready: threading.Event) -> None:
        conn = psycopg.connect(self.dsn, autocommit=True)
        conn.execute("LISTEN " + CHANNEL)
        ready.set()
        for note in conn.notifies():
            key = note.payload[:36]
            with self.lock:
                slot = self.waiting.pop(key, None)
            if slot is not None:
                slot[1].append(note.payload[36:])
                slot[0].set()

    def expect(self, key: str) -> tuple[threading.Event, list[str]]:
        with self.lock:
            if not self.started:
                self.started = True
                self._start()
            slot = (threading.Event(), [])
            self.waiting[key] = slot
            return slot

    def forget(self, key: str) -> None:
        with self.lock:
            self.waiting.pop(key, None)


_answers = Answers(os.environ.get("FLOOR_DATABASE_URL", ""))


class Submit:
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json.loads(req.bounded_stream.read())
        key = str(uuid.uuid4())
        with _pool.transaction() as conn:
            conn.execute("INSERT INTO floor_activities (id, body, status) VALUES (%s, %s, 'pending')",
                         (key, json.dumps(body.get("parameters"))), prepare=True)
        event, answer = _answers.expect(key)
        try:
            execute.send(key)
            if not event.wait(WAIT_S):
                raise falcon.HTTPServiceUnavailable(description="no answer")
        finally:
            _answers.forget(key)
        resp.content_type = falcon.MEDIA_JSON
        resp.text = answer[0]


app = falcon.App()
app.add_route("/floor", Submit())

SCHEMA: Final = ("CREATE TABLE IF NOT EXISTS floor_activities (id text PRIMARY KEY, body text NOT NULL, "
                 "status text NOT NULL, result text, created_at timestamptz NOT NULL DEFAULT now())")


def main(argv: list[str]) -> None:
    if argv[:1] == ["schema"]:
        with psycopg.connect(os.environ["FLOOR_DATABASE_URL"]) as conn:
            conn.execute(SCHEMA)
        return
    if argv[:1] == ["worker"]:
        worker = dramatiq.Worker(_broker, queues={QUEUE}, worker_threads=int(argv[1]) if argv[1:] else 8)
        worker.start()
        stop = threading.Event()
        import signal

        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        while not stop.wait(1):
            pass
        worker.stop()
        return
    raise SystemExit("usage: python -m bench.stack_floor_app schema|worker [threads]")


if __name__ == "__main__":
    main(sys.argv[1:])
