"""The access controls every authenticated request passes, in one call.

``infra.auth.principal.authenticate`` calls :func:`check_request` once it knows who
stamped the request: the IP allow-list of the credential's organization
(``infra.access.ip_allowlist``) and, for a session issued under a session profile, the
profile's scope (``infra.access.session_profiles``). Outside an HTTP request (no client
address bound: workers, the CLI) there is nothing to check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.orm import Session

from infra.access import ip_allowlist, origin, session_profiles
from infra.identity.ancestry import organization_chain

if TYPE_CHECKING:
    from infra.auth.principal import Principal


def check_request(session: Session, principal: Principal, body: bytes) -> None:
    """Raise ``PermissionDenied`` (403) when an access control refuses the request."""
    address = origin.current()
    if address is None:
        return
    # Top-level organizations only: sub-organizations are never evaluated (Turnkey).
    if len(organization_chain(session, principal.organization_id)) == 1:
        ip_allowlist.enforce(session, principal.organization_id, principal.public_key, address)
    if principal.session_profile_id:
        session_profiles.enforce(session, principal, body)
