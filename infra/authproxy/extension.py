"""The auth proxy's hooks into shared mechanisms.

- ``walletKitSettings.oauthClientIds`` of an organization's enabled proxy configuration join
  the client ids its OAuth providers and OAuth 2.0 credentials register
  (``infra.sessions.oidc.AUDIENCE_SOURCES``): they are audiences OIDC logins accept.
- A completed configuration change is published to the proxy processes
  (``infra.authproxy.invalidation``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.authproxy import invalidation
from infra.bootstrap import WORKER_HOOKS
from infra.db.models.auth_proxy import AuthProxyConfig
from infra.pipeline import lifecycle
from infra.sessions.oidc import AUDIENCE_SOURCES


def proxy_client_ids(session: Session, organization_ids: Sequence[str]) -> Iterable[str]:
    """The OAuth client ids of the enabled proxy configurations of ``organization_ids``."""
    rows = session.scalars(select(AuthProxyConfig.settings).where(
        AuthProxyConfig.organization_id.in_(list(organization_ids)),
        AuthProxyConfig.enabled.is_(True)))
    for settings in rows:
        ids = ((settings or {}).get("walletKitSettings") or {}).get("oauthClientIds") or {}
        yield from (v for v in ids.values() if isinstance(v, str) and v)


if proxy_client_ids not in AUDIENCE_SOURCES:
    AUDIENCE_SOURCES.append(proxy_client_ids)
    lifecycle.LISTENERS.append(invalidation.on_activity_change)
    WORKER_HOOKS.append(invalidation.install)
