"""``remove_ip_allowlist``: delete the organization's (or one API key's) IP allow-list.

Root quorum only. Removing the organization's list stops all enforcement (key-level lists
only apply while it is enabled); they are kept and apply again once it is set enabled.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select

from infra.activities.set_ip_allowlist import api_key_public_key, top_level
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.access import IpAllowlist
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1RemoveIpAllowlistIntent``."""

    public_key: str | None = None


def _public_key(params: Params, session: Any, organization_id: str) -> str:
    top_level(session, organization_id)
    if params.public_key is None:
        return ""
    wanted = params.public_key.strip().lower().removeprefix("0x")
    if wanted and session.scalar(select(IpAllowlist.id).where(
            IpAllowlist.organization_id == organization_id,
            IpAllowlist.public_key == wanted)) is not None:
        return wanted  # the list of a key deleted since can still be removed
    return api_key_public_key(session, organization_id, params.public_key)


def check(params: Params, ctx: CheckContext) -> None:
    _public_key(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    public_key = _public_key(params, ctx.session, ctx.organization_id)
    ctx.session.execute(delete(IpAllowlist).where(
        IpAllowlist.organization_id == ctx.organization_id, IpAllowlist.public_key == public_key))
    return {}


SPEC = ActivitySpec(
    path="remove_ip_allowlist",
    versions=(Version("ACTIVITY_TYPE_REMOVE_IP_ALLOWLIST", Params, "removeIpAllowlistIntent",
                      "removeIpAllowlistResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="UPDATE",
    root_quorum_only=True,
)
