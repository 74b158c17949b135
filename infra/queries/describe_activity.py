"""``describe_activity`` (walletd's own query): what an activity would do, as the policy
engine sees it, so an approver reads the intent before voting.

Answers the activity's condition variables (PROTOCOL.md §8.3) built by the same code the
engine decides with (``infra.pipeline.conditions``): ``activity`` (type, resource, action),
the signer's ``wallet`` / ``wallet_account`` / ``private_key``, and for ``sign_transaction``
the decoded ``eth.tx`` (``chain_id``, ``to``, ``value``, ``data``, and ``function_name`` /
``function_signature`` / ``contract_call_args`` through the organization's stored contract
interfaces), ``solana.tx``, ``tron.tx`` or ``bitcoin.tx``. Integers are decimal strings
(a wei value does not fit a JavaScript number). Reads only; authenticated like every query
(a parent organization's credentials read its sub-organizations).
"""

from __future__ import annotations

from typing import Any

from infra.activities import registry
from infra.db.models.activities import Activity
from infra.errors import NotFound
from infra.pipeline.conditions import condition_context
from infra.policy.variables import activity_variable
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    activity_id: str


def wire_safe(value: Any) -> Any:
    """``value`` with integers as decimal strings and datetimes as ISO text."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return {str(k): wire_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [wire_safe(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def find_activity(ctx: QueryContext, organization_id: str, activity_id: str) -> Activity:
    activity = ctx.session.get(Activity, activity_id)
    if activity is None or activity.organization_id != organization_id:
        raise NotFound(f"activity not found: {activity_id}")
    return activity


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    activity = find_activity(ctx, params.organization_id, params.activity_id)
    intent: dict[str, Any] = next(iter(activity.intent.values()), {}) if activity.intent else {}
    variables = condition_context(ctx.session, activity.organization_id, activity.type, intent)
    variables["activity"] = activity_variable(activity.type, intent,
                                              registry().resource_action(activity.type))
    return {"activityId": activity.id, "type": activity.type,
            "variables": wire_safe(variables)}


SPEC = QuerySpec(path="describe_activity", params=Params, run=run)
