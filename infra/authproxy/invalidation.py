"""Telling every auth proxy process that a configuration changed.

When ``enable_auth_proxy``, ``update_auth_proxy_config`` or ``disable_auth_proxy``
completes, the configuration's id is published once the transaction commits; each proxy
process drops its cached copy (``authproxy.upstream.Upstream.forget``) and reads the new one
on its next request. Subscribers in the same process (the embedded ``walletd up``) are
called directly; across processes the message goes over Redis pub/sub on the rate limiter's
Redis (``Settings.effective_rate_limit_url``). Without Redis between separate processes, the
proxy's cache lifetime (``WALLETD_AUTH_PROXY_CONFIG_TTL_S``) bounds how stale a copy gets.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy import select

from infra.db.changes import Change
from infra.db.models.auth_proxy import AuthProxyConfig
from infra.db.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)

CHANNEL = "walletd:authproxy:changed"
CHANGING_TYPES = frozenset({"ACTIVITY_TYPE_ENABLE_AUTH_PROXY", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY",
                            "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG"})

_subscribers: list[Callable[[str], None]] = []
_redis_url = ""


def _is_redis(url: str) -> bool:
    return url.startswith(("redis://", "rediss://"))


def configure(url: str) -> None:
    """Where changes are published across processes (a Redis URL; anything else: nowhere)."""
    global _redis_url
    _redis_url = url if _is_redis(url) else ""


def publish(config_id: str) -> None:
    """Announce that ``config_id`` changed, to this process and over Redis."""
    for callback in list(_subscribers):
        callback(config_id)
    if _redis_url:
        try:
            import redis

            redis.Redis.from_url(_redis_url).publish(CHANNEL, config_id)
        except Exception as ex:  # a lost message only delays the change to the cache's lifetime
            log.warning("could not publish an auth proxy change: %s", type(ex).__name__)


def subscribe(callback: Callable[[str], None], url: str, stop: threading.Event | None = None) -> None:
    """Call ``callback(config_id)`` on every change: in-process, and from Redis when ``url`` is one."""
    _subscribers.append(callback)
    if _is_redis(url):
        threading.Thread(target=_listen, args=(callback, url, stop or threading.Event()),
                         name="authproxy-invalidation", daemon=True).start()


def _listen(callback: Callable[[str], None], url: str, stop: threading.Event) -> None:
    import redis

    while not stop.is_set():
        try:
            pubsub = redis.Redis.from_url(url).pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(CHANNEL)
            while not stop.is_set():
                message = pubsub.get_message(timeout=1.0)
                if message and isinstance(message.get("data"), bytes):
                    callback(message["data"].decode())
        except Exception as ex:
            log.warning("auth proxy change listener: %s; reconnecting", type(ex).__name__)
            time.sleep(1.0)


def on_activity_change(uow: UnitOfWork, change: Change) -> None:
    """Activity status listener: publish a completed configuration change after the commit."""
    activity = change.after
    if activity.type in CHANGING_TYPES and activity.status == "ACTIVITY_STATUS_COMPLETED":
        config_id = uow.session.scalar(select(AuthProxyConfig.id).where(
            AuthProxyConfig.organization_id == activity.organization_id))
        if config_id:
            uow.after_commit(lambda: publish(config_id))
