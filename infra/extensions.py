"""Modules that plug into shared mechanisms when imported.

Each listed module registers itself on import: lifecycle listeners
(``infra.pipeline.lifecycle.LISTENERS``), user/organization view sections, stamp
verifiers, worker hooks. ``load()`` runs in every process from ``bootstrap`` so all
processes see the same behaviour. Add one line per concept; missing modules are an error.
"""

from __future__ import annotations

import importlib

MODULES: tuple[str, ...] = (
    "infra.policies",
    "infra.pipeline.votes",
    "infra.webhooks.extension",
    "infra.identity.extension",
    "infra.identity.passkeys",
    "infra.identity.quotas",
    "infra.wallets.extension",
    "infra.sessions.extension",
    "infra.sessions.oauth_extension",
    "infra.authproxy.extension",
    "infra.observability.activities",
    "infra.access.extension",
)

_loaded = False


def load() -> None:
    """Import every extension module once."""
    global _loaded
    if _loaded:
        return
    for name in MODULES:
        importlib.import_module(name)
    _loaded = True
