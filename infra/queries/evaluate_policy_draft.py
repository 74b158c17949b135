"""``evaluate_policy_draft`` (walletd's own query): parse a draft policy with the server's own
parser and, given an activity, say what the engine would decide with the draft in force.

Request: ``{organizationId, effect, condition?, consensus?, time?, activityId?,
replacesPolicyId?}``. Answer:

- ``errors``: one ``{field, message, line, column}`` per expression that does not parse
  (``infra.policy.parser``: the same messages and positions ``create_policy`` answers with);
- with ``activityId`` and no errors, ``evaluation``: ``{draftOutcome, draftDetail, outcome,
  reason, settledBeforePolicies, policyEvaluations[{policyId, outcome}]}`` — the draft's own
  outcome on the activity's variables and the engine's verdict with the draft added to the
  organization's policies (or standing for ``replacesPolicyId``), at the current votes. The
  draft's id in ``policyEvaluations`` is ``"draft"``.

Nothing is stored: no policy, no evaluation, no status change (a query's session is never
committed). Authenticated like any query.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from infra.activities import registry
from infra.errors import NotFound
from infra.pipeline import engine
from infra.pipeline.what_if import what_if
from infra.policy.parser import MAX_LENGTH, InvalidPolicyExpression, parse
from infra.queries.describe_activity import find_activity
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel

DRAFT_ID = "draft"


class Params(WireModel):
    organization_id: str
    effect: Literal["EFFECT_ALLOW", "EFFECT_DENY"]
    condition: str | None = Field(default=None, max_length=MAX_LENGTH)
    consensus: str | None = Field(default=None, max_length=MAX_LENGTH)
    time: str | None = Field(default=None, max_length=MAX_LENGTH)
    activity_id: str | None = None
    replaces_policy_id: str | None = None


def _errors(params: Params) -> list[dict[str, Any]]:
    found = []
    for field, text in (("condition", params.condition), ("consensus", params.consensus),
                        ("time", params.time)):
        if not text:
            continue
        try:
            parse(text, field=field)
        except InvalidPolicyExpression as ex:
            found.append({"field": field, "message": str(ex), "line": ex.line,
                          "column": ex.column})
    return found


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    errors = _errors(params)
    answer: dict[str, Any] = {"errors": errors}
    if params.activity_id is None or errors:
        return answer
    activity = find_activity(ctx, params.organization_id, params.activity_id)
    found = registry().by_type.get(activity.type)
    if found is None:
        raise NotFound(f"activity type not served here: {activity.type}")
    draft = engine.Policy(DRAFT_ID, params.effect, params.condition or "",
                          params.consensus or "", params.time or "")
    result = what_if(ctx.session, activity, found[0], draft, params.replaces_policy_id)
    answer["evaluation"] = {
        "draftOutcome": result.draft.outcome.value,
        "draftDetail": result.draft.detail,
        "outcome": result.decision.outcome.value,
        "reason": result.decision.reason,
        "settledBeforePolicies": result.settled_before_policies,
        "policyEvaluations": [{"policyId": o.policy_id, "outcome": o.outcome.value}
                              for o in result.decision.policy_outcomes],
    }
    return answer


SPEC = QuerySpec(path="evaluate_policy_draft", params=Params, run=run)
