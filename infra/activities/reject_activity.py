"""``reject_activity``: reject an activity awaiting consensus; it ends REJECTED."""

from __future__ import annotations

from typing import Any

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.activity_rows import REJECTED
from infra.messaging import queues
from infra.pipeline.votes import cast_vote, find_target
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1RejectActivityIntent``: the full ``sha256:…`` fingerprint of the target."""

    fingerprint: str


def check(params: Params, ctx: CheckContext) -> None:
    find_target(ctx.session, ctx.organization_id, params.fingerprint)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    target = cast_vote(ctx, params.fingerprint, REJECTED)
    return {"activityId": target.id}


SPEC = ActivitySpec(
    path="reject_activity",
    versions=(
        Version("ACTIVITY_TYPE_REJECT_ACTIVITY", Params, "rejectActivityIntent", "rejectActivityResult"),
    ),
    execute=execute,
    check=check,
    pool=queues.CONSENSUS,
    # Votes: the docs list no resource or action (policies name them by kind).
    resource=None,
    action=None,
    consensus_vote=True,
)
