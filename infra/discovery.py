"""``GET /public/v1/discovery/keys``: the service's public keys, unauthenticated.

Each concept adds its keys with ``DISCOVERY_KEYS.append(section)``, where
``section(session) -> {wire_key: value}`` reads only public material (never key rings).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

DISCOVERY_KEYS: list[Callable[[Session], dict[str, Any]]] = []


def discovery_keys(session: Session) -> dict[str, Any]:
    """Every registered public key, merged."""
    out: dict[str, Any] = {}
    for section in DISCOVERY_KEYS:
        out.update(section(session))
    return out
