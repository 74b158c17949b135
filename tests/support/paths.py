"""One deployment on either path, for module fixtures parametrized over both."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support import services
from tests.support.deployment import Deployment


@contextmanager
def deployment_on(path: str, workdir: Path, env: dict[str, str]) -> Iterator[Deployment]:
    """``walletd up`` (``embedded``) or PostgreSQL + RabbitMQ of its own (``production``)."""
    if path == "embedded":
        dep = Deployment.embedded(workdir, env)
        try:
            yield dep
        finally:
            dep.stop()
        return
    pg, amqp = services.create_database(), services.create_vhost()
    dep = Deployment.production(workdir, pg, amqp, env)
    try:
        yield dep
    finally:
        dep.stop()
        services.drop_database(pg)
        services.delete_vhost(amqp)
