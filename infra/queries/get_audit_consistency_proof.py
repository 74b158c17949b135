"""``get_audit_consistency_proof`` (walletd's own): RFC 9162 consistency between two sizes."""

from __future__ import annotations

from typing import Any

from infra.audit import openapi, proofs
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    first_tree_size: str
    second_tree_size: str | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    first = proofs.parse_size(params.first_tree_size, "firstTreeSize")
    second = proofs.parse_size(params.second_tree_size, "secondTreeSize")
    return proofs.consistency_between(ctx.session, first or 0, second)


SPEC = QuerySpec(path="get_audit_consistency_proof", params=Params, run=run,
                 document=openapi.operation(
    "get_consistency_proof", "Prove the audit log only grew",
    "The consistency proof from firstTreeSize to the checkpoint of secondTreeSize (default: "
    "the latest): the later tree starts with the earlier one.",
    {"firstTreeSize": openapi.SIZE, "secondTreeSize": openapi.SIZE},
    {"checkpoint": openapi.CHECKPOINT_REF, "firstTreeSize": openapi.SIZE,
     "consistencyProof": openapi.HASHES}))
