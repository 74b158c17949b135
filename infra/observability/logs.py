"""Process logging: plain text, or one JSON object per line (``WALLETD_LOG_FORMAT=json``).

A JSON line carries ``time``, ``level``, ``logger``, ``process``, ``thread``, ``message``, the
ids of :mod:`infra.observability.context` that are set (``request_id``, ``activity_id``,
``organization_id``) and ``exception`` when there is one, so ``jq 'select(.activity_id ==
"…")'`` over every process's log follows one activity from the ingress to its executor.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Final

from infra.observability import context

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(process)d %(name)s: %(message)s"
_HANDLER: Final = "walletd"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, with the context ids."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "process": record.process,
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        line.update(context.current())
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(level: str, form: str) -> None:
    """Configure the root logger for a walletd process (``form``: ``text`` or ``json``)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if form == "json" else logging.Formatter(TEXT_FORMAT))
    handler.set_name(_HANDLER)
    root = logging.getLogger()
    for existing in list(root.handlers):
        if existing.get_name() == _HANDLER:  # configured before in this process: replace it
            root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("pika").setLevel(logging.WARNING)
