"""``set_ip_allowlist``: replace the organization's (or one API key's) IP allow-list.

Root quorum only. Top-level organizations only (sub-organizations are never evaluated
against a list, as Turnkey documents). Rules are normalised, de-duplicated and bounded
(``infra.access.ip_allowlist``); an invalid rule is refused with its index.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.access.ip_allowlist import check_on_evaluation_error, normalise_rules
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.clock import now_ms
from infra.db.models.access import IpAllowlist
from infra.db.models.organizations import ApiKey, Organization
from infra.errors import FailedPrecondition, InvalidRequest, NotFound
from infra.messaging import queues
from infra.wiremodel import WireModel


class Rule(WireModel):
    """``v1IpAllowlistIntentRule``."""

    cidr: str
    label: str | None = None


class Params(WireModel):
    """``v1SetIpAllowlistIntent``."""

    public_key: str | None = None
    enabled: bool | None = None
    rules: list[Rule] = []
    on_evaluation_error: str | None = None


def top_level(session: Any, organization_id: str) -> None:
    """A 400 for a sub-organization: only top-level organizations have allow-lists."""
    org = session.get(Organization, organization_id)
    if org is not None and org.parent_id:
        raise FailedPrecondition("IP allowlists apply to the parent organization only; "
                                 "sub-organizations cannot configure one")


def api_key_public_key(session: Any, organization_id: str, public_key: str) -> str:
    """The stored public key of the organization's API key ``public_key``, or a 404."""
    wanted = public_key.strip().lower().removeprefix("0x")
    if not wanted:
        raise InvalidRequest("publicKey is empty; leave it out for the organization's list",
                             field="parameters.publicKey")
    found = session.scalar(select(ApiKey.public_key).where(
        ApiKey.organization_id == organization_id, ApiKey.public_key == wanted))
    if found is None:
        raise NotFound(f"no API key with public key {public_key} in organization "
                       f"{organization_id}")
    return str(found)


def _validate(params: Params, session: Any, organization_id: str) -> str:
    top_level(session, organization_id)
    check_on_evaluation_error(params.on_evaluation_error)
    normalise_rules(params.rules, 0)
    if params.public_key is None:
        return ""
    if params.enabled is not None:
        raise InvalidRequest("enabled is only meaningful for the organization's list; leave it "
                             "out for an API key's list", field="parameters.enabled")
    return api_key_public_key(session, organization_id, params.public_key)


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    public_key = _validate(params, ctx.session, ctx.organization_id)
    rules = normalise_rules(params.rules, now_ms())
    row = ctx.session.scalar(select(IpAllowlist).where(
        IpAllowlist.organization_id == ctx.organization_id, IpAllowlist.public_key == public_key))
    if row is None:
        row = IpAllowlist(organization_id=ctx.organization_id, public_key=public_key)
        ctx.session.add(row)
    # A rule already listed keeps its creation time.
    created = {r.get("cidr"): r.get("createdAt") for r in (row.rules or [])}
    for rule in rules:
        rule["createdAt"] = str(created.get(rule["cidr"]) or rule["createdAt"])
    row.rules = rules
    row.enabled = None if public_key else bool(params.enabled)
    row.on_evaluation_error = check_on_evaluation_error(params.on_evaluation_error)
    ctx.session.flush()
    return {}


SPEC = ActivitySpec(
    path="set_ip_allowlist",
    versions=(Version("ACTIVITY_TYPE_SET_IP_ALLOWLIST", Params, "setIpAllowlistIntent",
                      "setIpAllowlistResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="UPDATE",
    root_quorum_only=True,
)
