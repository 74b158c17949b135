"""``get_audit_inclusion_proof`` (walletd's own): an activity's leaves with inclusion proofs.

Only leaves of the organization asked about are returned (a parent may ask about its
sub-organizations, as with every query); proofs reveal other organizations' leaves as hashes
only.
"""

from __future__ import annotations

from typing import Any

from infra.audit import openapi, proofs
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    activity_id: str
    tree_size: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    size = proofs.parse_size(params.tree_size, "treeSize")
    return proofs.activity_inclusion(ctx.session, params.organization_id, params.activity_id,
                                     size)


SPEC = QuerySpec(path="get_audit_inclusion_proof", params=Params, run=run,
                 document=openapi.operation(
    "get_inclusion_proof", "Prove an activity's history is in the audit log",
    "Every leaf recording a change of the activity, each with its RFC 9162 inclusion proof "
    "against the checkpoint of treeSize (default: the latest); pendingLeaves are recorded but "
    "not yet in a checkpoint.",
    {"activityId": {"type": "string"}, "treeSize": openapi.SIZE},
    {"checkpoint": openapi.CHECKPOINT_REF, "leaves": openapi.LEAF_LIST,
     "pendingLeaves": {"type": "array", "items": {"type": "string"}}}))
