"""Authorization of one authenticated request: the access controls, in one call.

``infra.auth.principal.authenticate`` answers who is asking; its two callers then call
:func:`authorize` with what the route says is asked: ``infra.pipeline.submit`` with the
activity of the parsed envelope (the route's type and its parameters),
``infra.queries_service`` with :data:`QUERY` whatever the query's body carries. In order:

1. the IP allow-list of the credential's organization (``infra.access.ip_allowlist``),
   when a client address is bound (an HTTP request; workers and the CLI have none);
2. for a credential issued under a session profile, the profile's scope
   (``infra.access.session_profiles``), evaluated once on that request;
3. for such a credential, activities it may run only when its scope names them
   (``infra.access.issuance``): those binding something the profile would not follow, and
   logins naming another profile.

Each refusal is a 403 naming its rule; nothing has been stored yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy.orm import Session

from infra.access import ip_allowlist, issuance, origin, session_profiles
from infra.errors import PermissionDenied
from infra.identity.ancestry import organization_chain
from infra.policy.variables import ResourceAction

if TYPE_CHECKING:
    from infra.auth.principal import Principal


@dataclass(frozen=True)
class Submission:
    """What a request asks, as its route parsed it: an activity type, its parameters and
    what policies read as its ``activity.resource`` / ``action`` (the route's spec's;
    :data:`QUERY` for every query)."""

    type: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    resource_action: ResourceAction | None = None


#: Every query, whatever its body carries.
QUERY: Final = Submission(session_profiles.QUERY)


def authorize(session: Session, principal: Principal, request: Submission) -> None:
    """Raise ``PermissionDenied`` (403) when an access control refuses ``request``."""
    address = origin.current()
    # Top-level organizations only: sub-organizations are never evaluated (Turnkey).
    if address is not None and len(organization_chain(session, principal.organization_id)) == 1:
        ip_allowlist.enforce(session, principal.organization_id, principal.public_key, address)
    if not principal.session_profile_id:
        return
    profile = session_profiles.enforce(
        session, principal, session_profiles.activity_of(request.type, request.parameters,
                                                        request.resource_action))
    assert profile is not None
    if request.type == QUERY.type or issuance.names(profile.scope, request.type):
        return
    if issuance.unfollowed(request.type, request.parameters):
        raise PermissionDenied(issuance.refusal(
            profile, request.type, "binds a credential or identity the profile does not follow"))
    named = request.parameters.get("sessionProfileId")
    if isinstance(named, str) and named and named != profile.id:
        raise PermissionDenied(issuance.refusal(profile, request.type,
                                                "names another session profile"))
